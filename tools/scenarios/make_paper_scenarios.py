#!/usr/bin/env python3
"""Writes scenarios/paper/*.json, the bundled suite that reproduces the shape of
the paper's findings, from the shared pieces below (one place for the surface
texts, so every scenario draws from the same varied templates).

Usage: tools/scenarios/make_paper_scenarios.py   (run from the repository root)
"""
import json
from pathlib import Path

OUT = Path("scenarios/paper")
# The wording family of every bundled scenario (calibration pools a family's
# scenarios and asks a construction to hold on several families).
FAMILY = "smart-home"

SYSTEM = [
    "You are a home assistant.",
    "You are a helpful assistant that controls the smart home.",
    "You are the house's voice assistant. Keep track of the devices.",
    "You are a smart-home helper. Answer briefly.",
    "You manage the lights and appliances of this home.",
]

ROOMS = ["hallway", "kitchen", "garage", "bedroom", "study", "porch", "attic", "basement", "bathroom", "nursery",
         "pantry", "office"]
DEVICES = ["light", "lamp", "fan", "heater", "radio", "kettle", "dehumidifier", "humidifier"]

FILLERS = [
    ("What's the weather like tomorrow?", "Tomorrow looks mild and mostly sunny."),
    ("Can you suggest something quick for dinner?", "A vegetable stir-fry with rice takes about twenty minutes."),
    ("Set a timer for ten minutes.", "A ten-minute timer is running."),
    ("How many days until the weekend?", "Two more days until Saturday."),
    ("Remind me to call the plumber.", "I'll remind you to call the plumber."),
    ("What's a good stretch for the lower back?", "Try a gentle child's pose for thirty seconds."),
    ("Play some relaxing music.", "Playing a calm piano playlist."),
    ("Add milk to the shopping list.", "Milk is on the shopping list."),
    ("How long should I boil an egg?", "About nine minutes for a firm yolk."),
    ("What's the capital of Portugal?", "Lisbon."),
    ("Is it going to rain this afternoon?", "There's a small chance of a shower after four."),
    ("Tell me a short joke.", "I told my plants a joke; they didn't get it, they're not that bright."),
    ("How do I say thank you in Italian?", "You say grazie."),
    ("What time does the bakery open?", "It opens at seven on weekdays."),
    ("Add eggs to the shopping list too.", "Eggs are on the list as well."),
    ("Any tips for falling asleep faster?", "Keep the room cool and put screens away an hour before bed."),
    ("How far is the moon?", "About three hundred eighty-four thousand kilometres."),
    ("What's a good name for a goldfish?", "How about Bubbles?"),
    ("Convert five miles to kilometres.", "That's about eight kilometres."),
    ("When is the next full moon?", "In about eleven days."),
    ("Recommend a podcast about history.", "Try one that covers a single century per season."),
    ("What's the boiling point of water?", "One hundred degrees Celsius at sea level."),
    ("How many teaspoons are in a tablespoon?", "Three."),
    ("Who wrote Pride and Prejudice?", "Jane Austen."),
    ("Suggest a quick workout.", "Ten squats, ten push-ups and a one-minute plank, three rounds."),
    ("What's the square root of 144?", "Twelve."),
    ("Should I water the tomatoes today?", "Yes, the soil has been dry since Monday."),
    ("What's on the calendar tomorrow?", "A dentist appointment at ten."),
    ("How do I remove a coffee stain?", "Blot it, then dab with cold water and a little vinegar."),
    ("Give me a word that rhymes with orange.", "Almost nothing does; door hinge comes close."),
    ("Is the post office open on Sunday?", "No, it's closed on Sundays."),
    ("What should I read next?", "A short novel would fit a busy week."),
    ("How many legs does a spider have?", "Eight."),
    ("Lower the music volume a little.", "Volume lowered."),
]

SOURCE_BINARY = [
    "Please switch the {room} {device} {value}.",
    "Can you turn the {room} {device} {value}?",
    "Turn the {room} {device} {value}, please.",
    "I'd like the {room} {device} {value} now.",
    "Switch the {room} {device} {value} for me.",
]

QUESTION_BINARY = [
    "Is the {room} {device} on or off? Answer with one word.",
    "Quick check: is the {room} {device} currently on or off?",
    "Tell me whether the {room} {device} is on or off.",
    "Did I leave the {room} {device} on or off? One word, please.",
    "What state is the {room} {device} in, on or off?",
]

RECORD_BINARY = [
    "(Memory: the {room} {device} is {value}.)",
    "(Note: the {room} {device} was switched {value}.)",
    "(State log: {room} {device} = {value}.)",
    "(Remember: the {room} {device} is {value}.)",
    "(Memory note: the user set the {room} {device} {value}.)",
]

# Carrier phrasings; none states the value. The first four are the carrier
# table's kinds; the sweep runs them all.
CONSTRUCTIONS = {
    "ok": ["OK."],
    "done": ["Done."],
    "sure": ["Sure thing."],
    "acknowledgement": ["Got it, I've set it as you asked.", "Sure, it's taken care of.", "All set, just as you asked."],
    "confirmation": ["Confirmed: {room} {device} updated.", "Confirmed, the {room} {device} has been updated."],
    "action-taken": ["I've sent the command to the {room} {device} and it responded.",
                     "The {room} {device} accepted the command just now."],
    "summary": ["Summary of changes so far: the {room} {device} was switched as requested.",
                "So far today: one change, to the {room} {device}, as you asked."],
    "noted-state": ["Done. I've noted the {room} {device}'s new state.",
                    "Done, and I've recorded the new state of the {room} {device}."],
    "remember": ["I'll remember how the {room} {device} is set.", "I'll keep in mind how the {room} {device} is set now."],
    "before-we-go-on": ["Before we go on: the {room} {device} is now set the way you asked."],
    "log-line": ["[log] {room}_{device} changed by user request"],
    "restate-request": ["You asked me to change the {room} {device}, and I did exactly that."],
    "state-check": ["I checked: the {room} {device} is now in the state you wanted.",
                    "Checked it myself: the {room} {device} is in the state you asked for."],
    "energy-note": ["The {room} {device} is set as requested; I'll factor that into tonight's energy estimate."],
}
CARRIER_TABLE = ["acknowledgement", "confirmation", "action-taken", "summary"]
BEST = "noted-state"


def fillers(count):
    return [{"user": u, "assistant": a} for u, a in FILLERS[:count]]


def constructions(ids):
    return [{"id": i, "templates": CONSTRUCTIONS[i]} for i in ids]


def scenario(name, finding, suite, payload, source, question, answer_prefix, record, construction_ids,
             distances=(2,), variables=None, pairs=200, seed=1):
    return {
        "name": name,
        "finding": finding,
        "suite": suite,
        "family": FAMILY,
        "system": SYSTEM,
        "variables": variables or {"room": ROOMS, "device": DEVICES},
        "payload": payload,
        "source": {"role": "user", "templates": source},
        "constructions": constructions(construction_ids),
        "fillers": fillers(max(max(distances), 4) if max(distances) <= len(FILLERS) else len(FILLERS)),
        "distances": list(distances),
        "record": record,
        "query": {"question": question, "answer_prefix": answer_prefix},
        "pairs": pairs,
        "seed": seed,
    }


def binary(name, finding, suite, construction_ids, distances=(2,), seed=1):
    return scenario(name, finding, suite, {"type": "binary", "values": ["on", "off"]}, SOURCE_BINARY,
                    QUESTION_BINARY, ["The {room} {device} is"], RECORD_BINARY, construction_ids, distances, seed=seed)


def payload_scenario(name, payload, noun, source, question, answer_prefix, record, finding):
    return scenario(name, finding, "payload-types", payload, source, question, answer_prefix, record, [BEST],
                    variables={"room": ROOMS, "device": [noun]}, seed=11)


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    suite = {
        "carrier_table": binary(
            "carrier-table", "A later event that refers to a binary state without stating it carries the state "
            "(paper: 99:0 aligned:anti with a carrier on Qwen3-8B).", "carrier-table", CARRIER_TABLE),
        "construction_sweep": binary(
            "construction-sweep", "The carrier's phrasing decides how much is recovered (paper: 6% to 51% across "
            "constructions, and the best ones differ between models).", "construction-sweep", list(CONSTRUCTIONS),
            seed=2),
        "distance": binary(
            "distance", "Recovery as the number of filler turns between the carrier and the query grows.",
            "distance", [BEST], distances=(0, 1, 2, 4, 8, 16, 32), seed=3),
        "payload_binary": binary(
            "payload-binary", "Binary payloads land (paper).", "payload-types", [BEST], seed=11),
        "payload_categorical": payload_scenario(
            "payload-categorical", {"type": "categorical", "values": ["red", "green", "blue", "yellow"]}, "light",
            ["Set the {room} {device} colour to {value}.", "Make the {room} {device} {value}, please.",
             "Change the {room} {device} to {value}.", "Can you switch the {room} {device} colour to {value}?",
             "I'd like the {room} {device} in {value}."],
            ["What colour is the {room} {device}? One word.", "Which colour did I pick for the {room} {device}?",
             "Tell me the colour of the {room} {device}.", "What colour is the {room} {device} set to?",
             "Remind me of the {room} {device} colour."],
            ["The {room} {device} is"],
            ["(Memory: the {room} {device} is {value}.)", "(Note: the {room} {device} colour is {value}.)",
             "(State log: {room} {device} colour = {value}.)", "(Remember: the {room} {device} is {value}.)",
             "(Memory note: the user made the {room} {device} {value}.)"],
            "Categorical payloads (4 values): between binary and numbers."),
    }
    for digits in (1, 2, 3):
        suite[f"payload_integer_{digits}"] = payload_scenario(
            f"payload-integer-{digits}", {"type": "integer", "digits": digits}, "thermostat",
            ["Set the {room} {device} to {value}.", "Put the {room} {device} on {value}, please.",
             "Change the {room} {device} setting to {value}.", "Can you set the {room} {device} to {value}?",
             "I'd like the {room} {device} at {value}."],
            ["What is the {room} {device} set to? Just the number.", "Which setting did I give the {room} {device}?",
             "Tell me the {room} {device} setting.", "What number is the {room} {device} on?",
             "Remind me of the {room} {device} setting."],
            ["The {room} {device} is set to"],
            ["(Memory: the {room} {device} is set to {value}.)", "(Note: {room} {device} setting {value}.)",
             "(State log: {room} {device} = {value}.)", "(Remember: the {room} {device} is on {value}.)",
             "(Memory note: the user set the {room} {device} to {value}.)"],
            f"{digits}-digit numbers" + (" do not land (paper)." if digits == 3 else "."))
    suite["payload_name"] = payload_scenario(
        "payload-name", {"type": "name", "values": ["Alice", "Bob", "Carol", "David", "Emma", "Frank", "Grace",
                                                     "Henry", "Julia", "Kevin", "Laura", "Oscar"]}, "parcel",
        ["The {room} {device} is for {value}.", "Please note the {room} {device} belongs to {value}.",
         "That {room} {device} should go to {value}.", "Put the {room} {device} aside for {value}.",
         "Keep the {room} {device} for {value}, please."],
        ["Who is the {room} {device} for? Just the name.", "Whose is the {room} {device}?",
         "Tell me who gets the {room} {device}.", "Who should receive the {room} {device}?",
         "Remind me who the {room} {device} is for."],
        ["The {room} {device} is for"],
        ["(Memory: the {room} {device} is for {value}.)", "(Note: {room} {device} goes to {value}.)",
         "(State log: {room} {device} owner = {value}.)", "(Remember: the {room} {device} is {value}'s.)",
         "(Memory note: the {room} {device} belongs to {value}.)"],
        "Names as payloads.")
    for stem, doc in suite.items():
        (OUT / f"{stem}.json").write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
        print(f"wrote {OUT / (stem + '.json')}")


if __name__ == "__main__":
    main()
