"""Playing against the agents: the seat's view (:mod:`.view`), a game between one human seat and agents
(:mod:`.game`), the terminal front end ``barbu-play`` (:mod:`.terminal`, needs ``rich``) and the web table
``barbu-serve`` (:mod:`.server`, needs ``starlette`` and ``uvicorn``): ``pip install barbu_env[play]``."""
