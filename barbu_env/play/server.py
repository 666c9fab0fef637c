"""``barbu-serve``: a web table for playing against the agents and a replay viewer (Starlette + uvicorn).

The page (``static/``, no external assets) talks JSON to this app:

- ``POST /api/games`` starts a deal or a match (``seat``, ``agents``, ``mode``, ``rules``, ``contract``,
  ``declarer``, ``seed``); ``POST /api/games/{id}/move`` plays the human's action, checked by the engine
  (an illegal one is answered 400 with the legal actions), then the agents' moves up to the human's next
  turn; ``GET /api/games/{id}`` is the current view. Every answer about a live game carries only
  :func:`~barbu_env.play.view.seat_view` data: the human seat's hand and the public record, never another
  seat's unplayed cards.
- ``GET /api/games/{id}/record`` is the game's record once it is over (409 before: it holds every hand);
  finished games are saved under the records folder.
- ``GET /api/records`` lists the saved records, ``GET /api/records/{name}`` and ``POST /api/replay`` (a record
  as the body) replay one through the engine (:func:`barbu_env.records.replay`) into frames showing every hand.

Each game has its own env, agents and lock, so several games run at once independently. The server listens
on 127.0.0.1 unless ``--host`` says otherwise. A game's agents and rules are chosen among those the server offers
(``GET /api/options``): the named agents, ``checkpoints`` (also with ``endgame=9``) where that folder exists and the
specs given with ``--agent`` (an agent of your own, a Stable-Baselines3 model, ``pimc:samples=64`` ...), and the rules
presets; any other spec or a file path from a request is refused, as an agent spec can name code to run or a file to
load.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import secrets
import sys
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ..actions import action_names
from ..agents import REGISTRY
from ..records import GameRecord, RecordError, load, replay
from ..rules import PRESETS
from .game import Event, Game, IllegalMove
from .view import full_view

STATIC = Path(__file__).resolve().parent / "static"
#: Games kept at once; the oldest is dropped past this.
MAX_GAMES = 64
_NAME = re.compile(r"^[A-Za-z0-9_.-]+\.json$")
_GAME_KEYS = ("seat", "agents", "mode", "rules", "contract", "declarer", "seed")


class _Live:
    """A game and the lock that serialises its requests."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.lock = asyncio.Lock()
        self.saved: Path | None = None


def _error(message: str, status: int = 400, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": message, **extra}, status_code=status)


def _events(events: list[Event]) -> list[dict[str, Any]]:
    return [{"seat": e.seat, "action": e.action, "view": e.view} for e in events]


def replay_frames(record: GameRecord, source: str | None = None) -> list[dict[str, Any]]:
    """Every step of a record as a frame: who played what, the table with all hands, the running totals."""
    frames = []
    totals = [0] * record.rules.players
    names = action_names(record.rules)
    for st in replay(record, source):
        deal = st.deal
        if deal.is_over and deal.scores is not None:
            totals = [t + v for t, v in zip(totals, deal.scores)]
        frames.append({"deal_no": st.deal_no, "step": st.step, "seat": st.seat,
                       "action": names[st.action] if st.step >= 0 else None, "view": full_view(deal, None),
                       "totals": totals})  # fmt: skip
    return frames


def _replay_payload(record: GameRecord, source: str) -> dict[str, Any]:
    return {"source": source, "kind": record.kind, "players": record.players, "finished": record.finished,
            "totals": record.totals, "winners": record.winners, "frames": replay_frames(record, source)}  # fmt: skip


def offered_agents(extra: Sequence[str] = ()) -> list[str]:
    """The agent specs a game may seat: the named agents, ``checkpoints`` where that folder exists (the networks,
    and the networks with PIMC in the last five tricks), then ``extra``."""
    specs = sorted(REGISTRY)
    if Path("checkpoints").is_dir():
        specs += ["checkpoints", "checkpoints:endgame=9"]
    return specs + [s for s in extra if s not in specs]


def create_app(records_dir: str | Path = "barbu_games", agents: Sequence[str] = ()) -> Starlette:
    """The ASGI app; finished games are saved in ``records_dir`` and its records can be replayed. ``agents``: specs
    offered besides the named agents (:func:`offered_agents`); each is made once here, so a bad one fails now."""
    from ..agents import make

    games: OrderedDict[str, _Live] = OrderedDict()  # read and written on the event loop only
    folder = Path(records_dir)
    for spec in agents:
        make(spec)
    offered = offered_agents(agents)

    def live(request: Request) -> _Live | None:
        return games.get(request.path_params["gid"])

    def save_if_over(entry: _Live, gid: str) -> None:
        if entry.game.over and entry.saved is None:
            entry.saved = entry.game.env.save(folder / f"{gid}.json")

    async def index(request: Request) -> Response:
        return FileResponse(STATIC / "index.html")

    async def options(request: Request) -> Response:
        return JSONResponse({"agents": offered, "rules": sorted(PRESETS), "modes": ["deal", "match"]})

    async def body(request: Request) -> Any:
        try:
            return await request.json()
        except ValueError:
            return None

    async def new_game(request: Request) -> Response:
        data = await body(request)
        if not isinstance(data, dict):
            return _error("the body must be a JSON object with the game's options")
        unknown = sorted(set(data) - set(_GAME_KEYS))
        if unknown:
            return _error(f"unknown option(s) {unknown}: valid are {list(_GAME_KEYS)}")
        specs = data.get("agents", ["heuristic"])
        if not isinstance(specs, list) or not all(isinstance(a, str) for a in specs):
            return _error("agents must be a list of agent specs")
        for spec in specs:
            if spec not in offered:
                return _error(f"agent {spec!r} is not offered here: choose among {offered} (barbu-serve --agent SPEC "
                              "offers another)")  # fmt: skip
        rules = data.get("rules", "classic")
        if rules not in PRESETS:
            return _error(f"unknown rules {rules!r}: valid are the presets {sorted(PRESETS)}")
        try:
            game = await run_in_threadpool(Game, **data)
        except (TypeError, ValueError) as e:
            return _error(str(e))
        gid = secrets.token_urlsafe(9)
        entry = _Live(game)
        games[gid] = entry
        while len(games) > MAX_GAMES:
            games.popitem(last=False)
        async with entry.lock:
            events = await run_in_threadpool(game.advance)
            save_if_over(entry, gid)
            return JSONResponse({"id": gid, "players": game.players, "events": _events(events), "view": game.view(),
                                 "over": game.over})  # fmt: skip

    async def get_game(request: Request) -> Response:
        entry = live(request)
        if entry is None:
            return _error("no such game", 404)
        async with entry.lock:
            g = entry.game
            return JSONResponse({"id": request.path_params["gid"], "players": g.players, "view": g.view(),
                                 "over": g.over})  # fmt: skip

    async def move(request: Request) -> Response:
        entry = live(request)
        if entry is None:
            return _error("no such game", 404)
        data = await body(request)
        if not isinstance(data, dict) or not isinstance(data.get("action"), str):
            return _error('the body must be {"action": NAME}, e.g. {"action": "QS"}')
        async with entry.lock:
            game = entry.game
            try:
                events = await run_in_threadpool(game.play, data["action"])
            except IllegalMove as e:
                return _error(str(e), 400, legal=e.legal)
            save_if_over(entry, request.path_params["gid"])
            return JSONResponse({"events": _events(events), "view": game.view(), "over": game.over})

    async def game_record(request: Request) -> Response:
        entry = live(request)
        if entry is None:
            return _error("no such game", 404)
        async with entry.lock:
            if not entry.game.over:
                return _error("the game is not over: its record shows every hand", 409)
            return JSONResponse(entry.game.record.to_dict())

    async def list_records(request: Request) -> Response:
        names = sorted(p.name for p in folder.glob("*.json")) if folder.is_dir() else []
        return JSONResponse({"folder": str(folder), "records": names})

    async def saved_record(request: Request) -> Response:
        name = request.path_params["name"]
        path = folder / name
        if not _NAME.match(name) or not path.is_file():
            return _error(f"no record {name!r} in {folder}", 404)
        try:
            rec = await run_in_threadpool(load, path)
            return JSONResponse(await run_in_threadpool(_replay_payload, rec, name))
        except RecordError as e:
            return _error(str(e), 422)

    async def replay_upload(request: Request) -> Response:
        data = await body(request)
        source = request.query_params.get("name", "uploaded record")
        try:
            rec = GameRecord.from_dict(data, source)
            return JSONResponse(await run_in_threadpool(_replay_payload, rec, source))
        except RecordError as e:
            return _error(str(e), 422)

    routes = [
        Route("/", index),
        Route("/api/options", options),
        Route("/api/games", new_game, methods=["POST"]),
        Route("/api/games/{gid}", get_game),
        Route("/api/games/{gid}/move", move, methods=["POST"]),
        Route("/api/games/{gid}/record", game_record),
        Route("/api/records", list_records),
        Route("/api/records/{name}", saved_record),
        Route("/api/replay", replay_upload, methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    return Starlette(routes=routes)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="barbu-serve", description="A web table: play against agents, replay records.")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument("--records", default="barbu_games", help="folder of saved records (default barbu_games)")
    p.add_argument("--agent", action="append", default=[], metavar="SPEC",
                   help="offer this agent spec too (repeatable): your own module:Name or file.py:Name, "
                        "sb3:source=MODEL.zip, pimc:samples=64, a checkpoint path ...")  # fmt: skip
    return p


def main(argv: Sequence[str] | None = None) -> int:
    import uvicorn

    args = build_parser().parse_args(argv)
    try:
        app = create_app(args.records, args.agent)
    except ValueError as e:
        print(f"barbu-serve: error: {e}", file=sys.stderr)
        return 2
    print(f"barbu-serve: open http://{args.host}:{args.port}/ (records in {args.records})")
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


if __name__ == "__main__":
    sys.exit(main())
