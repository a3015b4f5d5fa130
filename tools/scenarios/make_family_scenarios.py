#!/usr/bin/env python3
"""Writes scenarios/families/*.json: second wording families for calibration.

A calibration profile certifies a carrier construction only when it carries
the value on at least two scenario families of different wording (a
construction measured on one set of templates may fail on another). The
paper scenarios are the "smart-home" family; the files written here use
other domains, system prompts, sources, carriers, fillers, records and
questions, but the same construction ids, so their cells line up with the
paper's: door locks (binary), shipments (categorical), lockers (integers),
a shift rota (names).

Usage: tools/scenarios/make_family_scenarios.py   (run from the repository root)
"""
import json
from pathlib import Path

OUT = Path("scenarios/families")

# Office and building small talk: nothing about locks, shipments, lockers or shifts.
FILLERS = [
    ("When is the next team meeting?", "Thursday at two in the small conference room."),
    ("Order more printer paper.", "Five reams of paper are on order."),
    ("How do I book the large meeting room?", "Use the room calendar and pick a free slot."),
    ("Book a taxi for six o'clock.", "A taxi is booked for six."),
    ("Is the canteen open late today?", "It closes at eight tonight."),
    ("What's the guest Wi-Fi called?", "It's the network named Visitors."),
    ("Remind me to water the office plants.", "I'll remind you on Friday morning."),
    ("Send the cleaning schedule to Tom.", "The schedule is on its way to Tom."),
]

DOOR_LOCKS = {
    "family": "door-locks",
    "system": [
        "You are a building security assistant.",
        "You control the locks of this building.",
        "You are the front-desk assistant and you manage door access.",
        "You handle access control for the office. Be brief.",
        "You are a concierge bot that looks after the doors and gates.",
    ],
    "variables": {
        "place": ["front", "back", "side", "garage", "cellar", "garden", "patio", "loading", "storage", "lobby",
                  "staff", "roof"],
        "door": ["door", "gate", "entrance", "hatch"],
    },
    # "unlocked" would be one token longer than "locked" on SmolLM2, and the
    # two sides of a pair must tokenize to the same length.
    "payload": {"type": "binary", "values": ["locked", "open"]},
    "source": [
        "Please make sure the {place} {door} is {value}.",
        "Can you leave the {place} {door} {value}?",
        "I want the {place} {door} {value} from now on.",
        "Have the {place} {door} {value}, thanks.",
        "Keep the {place} {door} {value} for the night.",
    ],
    # The paper's construction ids (scenarios/paper), phrased for locks.
    "constructions": {
        "acknowledgement": ["Understood, I've handled it.", "No problem, that's sorted.",
                            "Right away; consider it done."],
        "confirmation": ["Confirmed: {place} {door} lock changed.",
                         "Confirmed, the lock on the {place} {door} has been changed."],
        "action-taken": ["I've sent the request to the {place} {door} lock and it replied.",
                         "The {place} {door} lock acknowledged the request a moment ago."],
        "summary": ["Access changes so far: the {place} {door}, as you requested.",
                    "Recap of today: one lock change, at the {place} {door}, per your request."],
        "noted-state": ["Done. I've logged the {place} {door}'s new lock state.",
                        "Done, and I've written down the new lock state of the {place} {door}."],
    },
    "record": [
        "(Memory: the {place} {door} is {value}.)",
        "(Note: the {place} {door} was left {value}.)",
        "(Access log: {place} {door} = {value}.)",
        "(Remember: the {place} {door} is {value}.)",
        "(Memory note: the user wants the {place} {door} {value}.)",
    ],
    "question": [
        "Is the {place} {door} locked or open? Answer with one word.",
        "Quick check: is the {place} {door} currently locked or open?",
        "Tell me whether the {place} {door} is locked or open.",
        "Did I leave the {place} {door} locked or open? One word, please.",
        "What state is the {place} {door} in, locked or open?",
    ],
    "answer_prefix": ["The {place} {door} is"],
}

SHIPMENTS = {
    "family": "shipments",
    "system": [
        "You are a logistics assistant.",
        "You coordinate the company's shipments.",
        "You are the dispatch desk's assistant. Keep track of orders.",
        "You help plan freight. Answer briefly.",
    ],
    "variables": {
        "cargo": ["pallets", "samples", "spare parts", "brochures", "tiles", "monitors", "chairs", "textiles"],
        "city": ["Lyon", "Porto", "Bremen", "Malmo", "Genoa", "Gdansk", "Leeds", "Bilbao"],
    },
    "payload": {"type": "categorical", "values": ["air", "sea", "rail", "road"]},
    "source": [
        "Send the {cargo} for {city} by {value}.",
        "Ship the {cargo} to {city} by {value}, please.",
        "The {cargo} for {city} should go by {value}.",
        "Let's move the {cargo} to {city} by {value}.",
    ],
    "constructions": {
        "noted-state": ["Done. I've noted how the {cargo} for {city} will travel.",
                        "Done, and I've recorded the route for the {city} {cargo}."],
    },
    "record": [
        "(Memory: the {cargo} for {city} go by {value}.)",
        "(Note: {city} {cargo} shipped by {value}.)",
        "(Dispatch log: {cargo} to {city} = {value}.)",
    ],
    "question": [
        "How are the {cargo} for {city} travelling: air, sea, rail or road?",
        "By air, sea, rail or road: how do the {cargo} reach {city}?",
        "Which way are the {cargo} going to {city}, air, sea, rail or road?",
    ],
    "answer_prefix": ["The {cargo} for {city} go by"],
}

LOCKERS = {
    "family": "lockers",
    "system": [
        "You are a gym front-desk assistant.",
        "You keep track of the lockers at the club.",
        "You are the reception assistant of a sports centre. Be brief.",
    ],
    "variables": {
        "member": ["Sam", "Alex", "Jordan", "Robin", "Casey", "Morgan", "Taylor", "Jamie"],
        "item": ["bag", "racket", "helmet", "jacket", "towel", "keys"],
    },
    "source": [
        "Put {member}'s {item} in locker {value}.",
        "{member}'s {item} goes into locker {value}, please.",
        "Store {member}'s {item} in locker {value}.",
        "Could you keep {member}'s {item} in locker {value}?",
    ],
    "constructions": {
        "noted-state": ["Done. I've noted which locker holds {member}'s {item}.",
                        "Done, and I've recorded where {member}'s {item} is kept."],
    },
    "record": [
        "(Memory: {member}'s {item} is in locker {value}.)",
        "(Note: locker {value} holds {member}'s {item}.)",
        "(Locker log: {member}'s {item} = {value}.)",
    ],
    "question": [
        "Which locker is {member}'s {item} in? Just the number.",
        "What's the locker number for {member}'s {item}?",
        "Remind me which locker has {member}'s {item}.",
    ],
    "answer_prefix": ["{member}'s {item} is in locker"],
}

SHIFT_ROTA = {
    "family": "shift-rota",
    "system": [
        "You are a scheduling assistant for a small clinic.",
        "You manage the staff rota.",
        "You are the rota planner's assistant. Answer briefly.",
    ],
    "variables": {
        "day": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"],
        "shift": ["morning", "evening", "night", "weekend", "early", "late"],
    },
    "payload": {"type": "name", "values": ["Adam", "Beth", "Chris", "Diana", "Ethan", "Fiona", "George", "Hannah",
                                           "Isaac", "Jenny", "Liam", "Maria"]},
    "source": [
        "{value} will cover the {day} {shift} shift.",
        "Put {value} on the {day} {shift} shift.",
        "The {day} {shift} shift goes to {value}.",
        "Please give the {day} {shift} shift to {value}.",
    ],
    "constructions": {
        "noted-state": ["Done. I've noted who covers the {day} {shift} shift.",
                        "Done, and I've recorded the cover for the {day} {shift} shift."],
    },
    "record": [
        "(Memory: {value} covers the {day} {shift} shift.)",
        "(Note: {day} {shift} shift = {value}.)",
        "(Rota log: {day} {shift} shift goes to {value}.)",
    ],
    "question": [
        "Who covers the {day} {shift} shift? Just the name.",
        "Who is on the {day} {shift} shift?",
        "Remind me who has the {day} {shift} shift.",
    ],
    "answer_prefix": ["The {day} {shift} shift is covered by"],
}


def scenario(name, finding, suite, family, payload=None, seed=21):
    return {
        "name": name,
        "finding": finding,
        "suite": suite,
        "family": family["family"],
        "system": family["system"],
        "variables": family["variables"],
        "payload": payload or family["payload"],
        "source": {"role": "user", "templates": family["source"]},
        "constructions": [{"id": i, "templates": t} for i, t in family["constructions"].items()],
        "fillers": [{"user": u, "assistant": a} for u, a in FILLERS[:4]],
        "distances": [2],
        "record": family["record"],
        "query": {"question": family["question"], "answer_prefix": family["answer_prefix"]},
        "pairs": 200,
        "seed": seed,
    }


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    suite = {
        "door_locks_binary": scenario(
            "door-locks-binary", "The carrier constructions of the paper suite, worded for door locks: does a "
            "construction that carries an on/off state carry a locked/open one?", "construction-sweep",
            DOOR_LOCKS),
        "shipments_categorical": scenario(
            "shipments-categorical", "A categorical payload (4 values) in other wording than the smart-home "
            "colours.", "payload-types", SHIPMENTS),
        "shift_rota_name": scenario(
            "shift-rota-name", "Names as payloads, in other wording than the smart-home parcels.", "payload-types",
            SHIFT_ROTA),
    }
    for digits in (1, 2, 3):
        suite[f"lockers_integer_{digits}"] = scenario(
            f"lockers-integer-{digits}", f"{digits}-digit numbers in other wording than the smart-home "
            "thermostat.", "payload-types", LOCKERS, payload={"type": "integer", "digits": digits})
    for stem, doc in suite.items():
        (OUT / f"{stem}.json").write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
        print(f"wrote {OUT / (stem + '.json')}")


if __name__ == "__main__":
    main()
