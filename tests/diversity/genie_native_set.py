"""A GENIE similarity file as GENIE's pipeline writes it, for the tests of GENIE's layouts.

Two long prompts, three questions each (two probe ``Plot``, one ``Setting``); target models
``gpt-4o``, ``gpt-4o+persona``, ``llama-3`` and ``llama-3+persona`` with DocIDs 0, 1, 2 each
(the same DocIDs in every model); population documents of ``pop-model`` with DocIDs 0-4.
Similarities are drawn from a seeded generator among 1-4, 0 (the judge's "unspecified"), an
empty value and an out-of-range 5; some answers are ones GENIE excludes (``None.``, ``N/A``,
…), and, as GENIE's judge step does, their pairs carry no similarity.
"""

import json

import numpy as np

PROMPTS = [
    "Write a story about a lighthouse keeper who finds a message in a bottle, "
    "in which the sea itself is a character." * 3,
    '"So, there\'s living, dead, and undead." Your master looks at you, with horror.',
]
QUESTIONS = [
    ("What happens in the story?", "Plot"),
    ("How does the story end?", "Plot"),
    ("Where does the story take place?", "Setting"),
]
TARGET_MODELS = ["gpt-4o", "gpt-4o+persona", "llama-3", "llama-3+persona"]
EXCLUDED = ["None.", "N/A", "Unspecified", "Not applicable.", "Not specified"]


# two target models and three methods (the baseline has none), over four prompts
METHODS_MODELS = ["gpt-4o", "gpt-4o+persona", "gpt-4o+hot", "llama-3", "llama-3+persona",
                  "llama-3+hot"]  # fmt: skip
METHODS_PROMPTS = [*PROMPTS, "Describe a city that floats.", "A letter from a lost glove."]


def rows(seed: int = 3, prompts=PROMPTS, models=TARGET_MODELS) -> list[dict]:
    rng = np.random.default_rng(seed)
    found = []
    for prompt in prompts:
        for question, feature in QUESTIONS:
            members = {
                member: (
                    EXCLUDED[member % len(EXCLUDED)]
                    if rng.random() < 0.15
                    else f"population {member} says {rng.integers(0, 3)}"
                )
                for member in range(5)
            }
            for model in models:
                for doc in range(3):
                    answer = EXCLUDED[doc] if rng.random() < 0.1 else f"{model} {doc} on {question}"
                    for member, member_answer in members.items():
                        excluded = answer in EXCLUDED or member_answer in EXCLUDED
                        draw = rng.integers(0, 8)
                        similarity = (
                            None
                            if excluded
                            else [1, 2, 3, 4, 0, None, 5, 4][draw]
                            if draw != 7
                            else ""
                        )
                        row = {
                            "Prompt": prompt,
                            "Question": question,
                            "Feature": feature,
                            "DocID_1": doc,
                            "Model_1": model,
                            "Answer_1": answer,
                            "DocID_2": member,
                            "Model_2": "pop-model",
                            "Answer_2": member_answer,
                        }
                        if similarity is not None:
                            row["SimilarityJudgment"] = f"Therefore the answer is: {similarity}"
                        row["Similarity"] = similarity
                        found.append(row)
    return found


def jsonl(records: list[dict]) -> str:
    return "".join(json.dumps(row) + "\n" for row in records)


def column_json(records: list[dict]) -> str:
    """The records in pandas' default ``to_json`` layout: ``{column: {index: value}}``."""
    columns: dict[str, dict] = {}
    for index, row in enumerate(records):
        for column, value in row.items():
            columns.setdefault(column, {})[str(index)] = value
    return json.dumps(columns)


def with_repeats(records: list[dict], seed: int = 5) -> tuple[list[dict], int]:
    """The records with some pairs judged again, as a rerun of GENIE's judge appended to the
    file would: copies of rows whose answers GENIE scores, with a new ``Similarity`` (1-4,
    the same one again, or 0 / empty, which compute_genie drops), each inserted after its
    original. Returns the records and the number of repeated rows."""
    rng = np.random.default_rng(seed)
    found, repeated = [], 0
    for row in records:
        found.append(row)
        answered = row["Answer_1"] not in EXCLUDED and row["Answer_2"] not in EXCLUDED
        if answered and rng.random() < 0.2:
            for _ in range(int(rng.integers(1, 3))):
                again = {
                    **row,
                    "Similarity": [1, 2, 3, 4, row["Similarity"], 0, ""][rng.integers(0, 7)],
                }
                found.append(again)
                repeated += 1
    return found, repeated
