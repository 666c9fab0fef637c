"""Golden trajectories: the env's dealing, rules (RULES.md R1–R12), observations, masks and rewards are pinned.

For every preset of :data:`barbu_env.rules.PRESETS`, in deal and match mode, and a few seeds, a seeded
random-legal-play episode through ``barbu_env.env`` is hashed (:func:`trajectory_hash`: sha256 over each
step's observation bytes, action mask, reward, termination and truncation of the agent on move, and the
action taken). An unintended change of the shuffle, a rule, the observation layout or the rewards changes a
hash and fails :func:`test_golden_trajectories`.

A deliberate change of any of these updates the pinned values AND bumps the env version (``barbu_vN``, see
CHANGELOG.md): regenerate them with ``python tests/test_golden.py`` and paste its output over ``GOLDEN``.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

import barbu_env
from barbu_env.rules import PRESETS

SEEDS = (0, 1)
#: Match mode plays this many deals of each match (every deal of the short King matches).
MATCH_DEALS = 3


def trajectory_hash(preset: str, mode: str, seed: int) -> str:
    """sha256 of a random-legal-play episode of ``env(rules=preset, mode=mode)`` after ``reset(seed=seed)``.

    The actions are drawn from ``np.random.default_rng(seed + 1)`` among the legal ones; match mode stops after
    :data:`MATCH_DEALS` deals (the hash covers the deal count reached)."""
    e = barbu_env.env(rules=preset, mode=mode)
    e.reset(seed=seed)
    rng = np.random.default_rng(seed + 1)
    h = hashlib.sha256()
    for agent in e.agent_iter():
        obs, reward, term, trunc, _ = e.last()
        h.update(agent.encode())
        h.update(np.ascontiguousarray(obs["observation"], np.float32).tobytes())
        h.update(np.ascontiguousarray(obs["action_mask"], np.int8).tobytes())
        h.update(np.float64(reward).tobytes() + bytes([term, trunc]))
        if term or trunc:
            action = None
        else:
            legal = np.flatnonzero(obs["action_mask"])
            action = int(legal[rng.integers(len(legal))])
            h.update(action.to_bytes(1, "little"))
        e.step(action)
        if mode == "match" and e.unwrapped.match.deal_no >= MATCH_DEALS:
            h.update(b"match deals %d" % e.unwrapped.match.deal_no)
            break
    return h.hexdigest()


def generate() -> dict[tuple[str, str, int], str]:
    """Every pinned trajectory's hash, computed now."""
    presets = sorted(PRESETS)
    return {(p, m, s): trajectory_hash(p, m, s) for p in presets for m in ("deal", "match") for s in SEEDS}


#: Generated from main at db6d2fe (before the issue-15 changes); the same from this branch. classic3, classic5 and
#: positive1..3 (R12, R10.3) were added when the env first played them.
GOLDEN: dict[tuple[str, str, int], str] = {
    ("basic32", "deal", 0): "8117d10b5ab987ea9795218b6ffac3097a9ff8dbd628f49131e34dfc23b7c241",
    ("basic32", "deal", 1): "75b71824043385d82aa1f290fccef60a32ecd6beddb30dc194aed3f0754b0b0c",
    ("basic32", "match", 0): "5eefb376350bd86d0fdbeaf9d8e819f1247bbf9b261dc885635b4efb26d1f3da",
    ("basic32", "match", 1): "4a0ce1ac9589b762c7746dd9dfe0304d818428f7a17e40c4efccfb7223cfcac4",
    ("basic52", "deal", 0): "ceb5e69dbf84b92736000654d6b0d9884001786ebac8bf93f0da145e0855af3a",
    ("basic52", "deal", 1): "adaf704f121466dd4b2319c6addc432c344aadb4ee01083f08e63ce802dc6280",
    ("basic52", "match", 0): "283755db731254040213136ab596e1adf76c886a1b288b7a3505d5db4a8188bc",
    ("basic52", "match", 1): "4a514589052b1950a4e441bd1c555f90a01a9ee7ab5028567891b20e340d4ddf",
    ("classic", "deal", 0): "cd5b68d5630d173b882eb061c0ae26575294d77635b4801290329887b033166e",
    ("classic", "deal", 1): "47e09c2b83f23b47822653aea429c7f5739c8157590aebf48849289f469404c9",
    ("classic", "match", 0): "51349d281a021fdd8b5fe3417ec6711a28672ddec2606f9f63639d3fb67f2508",
    ("classic", "match", 1): "2fd68b2763c46ea1dd5562d6fb3df265257e69889694a50fbe73d5d0853ab6dd",
    ("classic3", "deal", 0): "1547fb17c371a2918d9002712b0fe454f4bc7d6278cbf71df7c8f91bb774e494",
    ("classic3", "deal", 1): "ec3ba9298423fa1d14ea009be05c34929b491581a085b9d0d5ef5b46f7bc971d",
    ("classic3", "match", 0): "f94a69bcabf91212e2020927127f4cdb069a9d901583b972a1f8bdd0a83393b9",
    ("classic3", "match", 1): "76a54c8c0bf1135cc516dcecf351369c28f32c6e29b243747d7940fbd4812781",
    ("classic5", "deal", 0): "cafe17f30b7d6a162c2b35119ab8140c5e127102dbb943de47a337e40fb4380f",
    ("classic5", "deal", 1): "1366462a2f444cd81ec46368ea24329de88f1abb7235f2ff02c140d41e61fc54",
    ("classic5", "match", 0): "9ada2c9e5531190d9a6a2943273a70e1eef61778c313c1940fbea401fe9bc59f",
    ("classic5", "match", 1): "eb57185f65b25418bbc16f97b9431beb7c72cfa46b75da7432f5d7a308cfbc35",
    ("king", "deal", 0): "707b33a7dc16469451029c3b5f009f56eeb559cc610a397400324eb86ba15adf",
    ("king", "deal", 1): "0862582676f3edd9a1fd29662ef066972f94d0b7a6d5a0e65162e402653613b8",
    ("king", "match", 0): "4e504b98d530f5e7f1b0ded443ed56b0de1a82906c9ddc91019b75a5b2805ba7",
    ("king", "match", 1): "7e30a964c2a159e4d96022d41c1477357e32cde5cb6204b3c494551b5a362d93",
    ("king3", "deal", 0): "4f0d2c616dc010129ce97c90cc16609130903d5d080e4a91cf4f8abe2529932e",
    ("king3", "deal", 1): "3a88547f42ce73a9f69175cea75d36c46e8409a2be3c47011ef8aca828a35b69",
    ("king3", "match", 0): "b52ef4c1a69675a2e38d69383c1ca20280c5428d86bee688e2eecb253938feb5",
    ("king3", "match", 1): "d6d370e6de646e8fc2f505203f6d266c15cdc4adb15586288d2f86232473508f",
    ("king5", "deal", 0): "14ca1294a2a94c3b848e895c3257c0f006a72886f04e0fdfd7f439f61a8396d0",
    ("king5", "deal", 1): "edd415c95c0e2ab29351af35df0584f9866d2ef022c8933dbbd94cdf718bac17",
    ("king5", "match", 0): "b61cfc9e31f85e7bad305e9a8226bd61d3ab5fbc79b2c45bc19a93ac770ec466",
    ("king5", "match", 1): "1d0ce5a917ab06b0e0341f890f831a99e55760e31d57f826b8f8268118ce95b5",
    ("king6", "deal", 0): "185ae01eea7c1a7958f030bc6aa65bf262830428e9bb000ba09f4df34dccb97d",
    ("king6", "deal", 1): "51bef61c4560254b08df6e494dc2dc3649b403e6f63c37783e44fbc5111a45ac",
    ("king6", "match", 0): "ace23f80d0707539bed92af1e57458b2406283cfae0f3131b9a1258bd54db380",
    ("king6", "match", 1): "a4fc39b9108675a3e7913e068968064f3f08eed282db9d3a07e4224b1e12ec93",
    ("king_choose", "deal", 0): "99fa01a7ce6d342865fe7da8ca5a3affe97a903b09dc6bcafa9ed1df2e72da98",
    ("king_choose", "deal", 1): "dfa7a37a184ae83f5081d5e3335d485e28b46996ebff2a84e8a860278b23184f",
    ("king_choose", "match", 0): "e04f5d151c0f07ca98b2f49eed3ced1cecc6ef0d1f057669e8975db04d6d8c02",
    ("king_choose", "match", 1): "d07bf129cafd5f1022f739845b60f000a27f687458b084446d5aa0e612e6a083",
    ("king_short", "deal", 0): "5bfaa02d233764866178550a84ba2a4c610a7751100f26461dc6e74aa7ac5302",
    ("king_short", "deal", 1): "68be04f3b8b7f42a6d24d32fda4ff7299db7de80d2c0fa9c6079a08d3b51b443",
    ("king_short", "match", 0): "280a58115f29dbdad64be047f22070852d1641f703e61ea2b225f6ede4ff1bff",
    ("king_short", "match", 1): "9080be079c79b3950ea8d5ecc878854e3f489ba1806a7e04643ebe2c2c1cebb9",
    ("online", "deal", 0): "03f7119f9cb0424788fe20cc530387e891b071d116d141fdb85c27b84d7e90f7",
    ("online", "deal", 1): "4697a446a10137f8254a636ca019765d6a635d349a1252bfd70de380577ad418",
    ("online", "match", 0): "f8518c9932846c1aecfd300c57291624dddee6b0e7fbd61091bde20331e7b551",
    ("online", "match", 1): "20593121e773a0c78fb4dbeee7cc096d43024ba6b0efdeda11d0484415986034",
    ("positive1", "deal", 0): "41f04231fd08ac61716a0fcc853a99c3f5924639ffb3c75bb31b456ba5b2d22d",
    ("positive1", "deal", 1): "eee1ae8d6e15fea1b0a85385fd4f2a2c73d1d7127eaa44536555e60998d8baba",
    ("positive1", "match", 0): "733d4e8717bc3925668cc18fad66c97bd68ad37e34e018c951c38cc9c4b526eb",
    ("positive1", "match", 1): "d0e4607f32aa99e96aabcef15d5168c2805bbf7979532fb03c7844fc349d7d90",
    ("positive2", "deal", 0): "ab4b4ee58ae4f7941baa830a1530644a0c42e774355c0a3752d5805f5402c41a",
    ("positive2", "deal", 1): "b604497d01b5fc9d14eeb519d20fe07a9c659a39d9e16e47a1a4458875138abb",
    ("positive2", "match", 0): "3ae72c8e3861d3c21dd02f03b0ce77fb043120be5a696b218b58474ce744b37f",
    ("positive2", "match", 1): "98e5b7ab197cf6210354243d2ff470b47dfc738a5ecb8272e0814afdb9e1d45d",
    ("positive3", "deal", 0): "bb0477eeee56cb6eba47ef51bbc7e82c98e2bfe0b2fcc66232e8e77cf9d80e2e",
    ("positive3", "deal", 1): "6f7d6f03f1f608ffb3872b42dbad46280d640b81d772a291a74fd85ae7b74e84",
    ("positive3", "match", 0): "1a11fce81f000beeb4b0328df1e077554c398a3d825b593ab4c3c3827a97e0fa",
    ("positive3", "match", 1): "1e6ef1d2ae69f4dd3e883d1ac8fe6c23b882a9ce2d925afb56d2ad76ec44c598",
    ("ravage_city", "deal", 0): "ed78dd3ee91910422d21330dd4ad1fa9eb1d3189dbc8e4d2675d7ebee2387818",
    ("ravage_city", "deal", 1): "a1f1ada4d5f8dacf661de5f6ddd01170c8e26e547dbfc0f19316086ec92eb630",
    ("ravage_city", "match", 0): "c7eb379231dfaf2245325f14e08dd3bd25de53b9c72228e2dc9a8bf4e5e26eb3",
    ("ravage_city", "match", 1): "40971d17248f75a87a1e5addd2f0846b4749ae8f0b96b51968b08de3e0556c6f",
    ("rotate", "deal", 0): "804cc891d8ab5faea48f2e9523670691216888aed34e3c00ae3d2e03c646f29d",
    ("rotate", "deal", 1): "c2f8459acba68d337bc77c9a5b798f7f6b9945c149365fa4441cd691da0e764d",
    ("rotate", "match", 0): "8d5646459961c051b0122918615f466f41bc04a1a58d299ca1aa24dcbb4ca2a7",
    ("rotate", "match", 1): "f891644ba93d0093382687602bffb200010552f3b0b6e34102fd1d59d12476cf",
    ("salad", "deal", 0): "ad38e5c4d61151b40f90d5af4d8c4255ae667e2b5bbaaf00818224927cf1d4e7",
    ("salad", "deal", 1): "c04a0f4bbecd1c58d845074ef685149a0292f2071153af1518ca55dc539e52e5",
    ("salad", "match", 0): "0d1d39001e77e43774e1ec16f3035f0700c7bfae6e1948138e964f171d73f847",
    ("salad", "match", 1): "c3a5218a1f8548c2ca859c3705b040736f47a41ade20071672f220c2fcb8cc38",
    ("spanish", "deal", 0): "48f9d4db30b9617072f611fba7fefd67e36f14da029e4e0011ec3e70a48db5d2",
    ("spanish", "deal", 1): "3e160fb0c24b80c0c23ee4e06183686f4ad5a6b1165f3bd9abc8ada3f4316563",
    ("spanish", "match", 0): "141515dc250e85d7793e9bbfdc54c116d47adcb4b824f080fceb04a1c5881936",
    ("spanish", "match", 1): "236e57a4fd8779f28df84b198a05d743aa22a535959bf41967d5960b67e34320",
}


def test_every_preset_and_mode_is_pinned():
    assert set(GOLDEN) == {(p, m, s) for p in PRESETS for m in ("deal", "match") for s in SEEDS}


@pytest.mark.parametrize("key", sorted(GOLDEN), ids=lambda k: "-".join(map(str, k)))
def test_golden_trajectories(key):
    assert trajectory_hash(*key) == GOLDEN[key], (
        f"trajectory {key} changed: if deliberate, regenerate GOLDEN (python tests/test_golden.py) and bump the "
        "env version (CHANGELOG.md)"
    )


if __name__ == "__main__":
    print("GOLDEN: dict[tuple[str, str, int], str] = {")
    for k, v in generate().items():
        print(f"    {k!r}: {v!r},")
    print("}")
