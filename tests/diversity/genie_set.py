"""A Genie set small enough to score by hand, as the file a researcher would import, and
the labels three people give its judgeable pairs (``HUMAN_LABELS``).

One prompt ``p1``; questions q1 and q2 probe Plot, q3 probes Setting; target documents d1,
d2; population documents e1, e2, e3. e2 gave no answer to q2, d1 gave no answer to q3
(``None`` answers: those pairs are left out). LLM similarities (``-`` = no usable pair)::

            q1 (Plot)     q2 (Plot)      q3 (Setting)
            e1 e2 e3      e1 e2 e3       e1 e2 e3
    d1       4  1  2       3  -  3        -  -  -
    d2       1  1  1       2  -  4        1  4         (e3 not judged for q3)

By hand, norm = (sim - 1) / 3, Q = 1 - mean(norm), Genie = mean of Q over the feature:
d1 Plot = ((1 - (1 + 0 + 1/3) / 3) + (1 - 2/3)) / 2 = 4/9; d1 Setting: none;
d2 Plot = (1 + (1 - (1/3 + 1) / 2)) / 2 = 2/3; d2 Setting = 1 - (0 + 1) / 2 = 1/2.
Per feature: Plot = (4/9 + 2/3) / 2 = 5/9 over 2 documents; Setting = 1/2 over 1.
17 pairs in the file, 5 of them with a missing answer, 12 judged.
"""

import io
import json

from tests.factories import label_every_item
from tests.files import named_upload

FEATURES = {"q1": "Plot", "q2": "Plot", "q3": "Setting"}
QUESTIONS = {
    "q1": "What happens in the story?",
    "q2": "How does the story end?",
    "q3": "Where does the story take place?",
}
MISSING = {("q2", "e2"), ("q3", "d1")}
LLM = {
    ("q1", "d1"): {"e1": 4, "e2": 1, "e3": 2},
    ("q1", "d2"): {"e1": 1, "e2": 1, "e3": 1},
    ("q2", "d1"): {"e1": 3, "e2": None, "e3": 3},
    ("q2", "d2"): {"e1": 2, "e2": 4, "e3": 4},  # e2 has no answer: its 4 is ignored
    ("q3", "d1"): {"e1": None, "e2": None, "e3": None},
    ("q3", "d2"): {"e1": 1, "e2": 4},
}
D1_PLOT, D2_PLOT, D2_SETTING = 4 / 9, 2 / 3, 1 / 2


def answer(question: str, document: str) -> str | None:
    return None if (question, document) in MISSING else f"{document} answers {question}"


def rows(with_questions: bool = True) -> list[dict]:
    found = []
    for (question, document), judged in LLM.items():
        for member, similarity in judged.items():
            row = {
                "prompt_id": "p1",
                "question_id": question,
                "feature": FEATURES[question],
                "document_id": document,
                "population_id": member,
                "target_answer": answer(question, document),
                "population_answer": answer(question, member),
                "similarity": similarity,
                "source": "llm",
            }
            if with_questions:
                row["question"] = QUESTIONS[question]
            found.append(row)
    return found


def jsonl(with_questions: bool = True) -> bytes:
    return "".join(json.dumps(row) + "\n" for row in rows(with_questions)).encode()


def upload(content: bytes, name: str = "judgments.jsonl") -> io.BytesIO:
    return named_upload(name, content)


# (question, document, population member) -> the three workers' labels
HUMAN_LABELS = {
    ("q1", "d1", "e1"): [4, 3, 4],
    ("q1", "d1", "e2"): [1, 2, 1],
    ("q1", "d1", "e3"): [3, 2, 2],
    ("q1", "d2", "e1"): [1, 1, 2],
    ("q1", "d2", "e2"): [2, 1, 1],
    ("q1", "d2", "e3"): [1, 1, 1],
    ("q2", "d1", "e1"): [3, 3, 2],
    ("q2", "d1", "e3"): [4, 3, 3],
    ("q2", "d2", "e1"): [2, 3, 2],
    ("q2", "d2", "e3"): [4, 4, 3],
    ("q3", "d2", "e1"): [1, 2, 1],
    ("q3", "d2", "e2"): [3, 4, 4],
}


def human_label(item, worker: int) -> int:
    """The label person ``worker`` (0, 1 or 2) gives the similarity item of a pair."""
    meta = item.metadata
    return HUMAN_LABELS[(meta["question_id"], meta["document_id"], meta["population_id"])][worker]


def label_as_the_people_did(batch) -> None:
    """The three people (``judge-0`` to ``judge-2``) label the set's similarity batch."""
    label_every_item(batch, [f"judge-{worker}" for worker in range(3)], human_label)
