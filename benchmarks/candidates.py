"""A production log of 100,000 lines imported, scrubbed, grouped and sampled.

Run: python benchmarks/candidates.py [--lines N] [--dupes 0.2] [--rounds N] [--sample N]
     [--difficulty N] [--postgres URL]

Generates ``--lines`` log lines: distinct questions (a template with three slots from a
vocabulary of about 2,000 made-up words, and a tail of two to four more), of which
``--dupes`` are near-duplicates of an earlier question, made the way people reword: lower
case without punctuation, one typo, "please" or "hi," added, a word dropped, or two of these
at once. One line in fifty carries an e-mail address or phone number; each line retrieves one
or two sentences of 20 small documents (one in ten a passage found in no document); one in
eight has negative feedback, and sessions of two turns now and then.

Per round, on a fresh workspace: the import (read, scrub, anchor, store, group, cluster),
a sample of ``--sample`` without asking the retrievers, and one with ``--difficulty`` groups
asked of the project's pool (keyword and dense: the first asks load the embedding model).
Prints wall times (min/median over ``--rounds``), the peak resident memory of the process
after each step in the first round, the load average, and the grouping's pairwise precision
and recall on the planted duplicates (two lines are a true pair when one was made from the
other or both from the same question).

Figures (100,000 lines, 20 % near-duplicates: 80,660 groups of 79,983 questions; 3 rounds,
SQLite, load 25-35 on 2 cores shared with other work): import 63.2 s min / 160.5 s median,
peak resident memory 338 MB after it (145 MB before, the generated log); sample of 50 without
the retrievers 7.6 / 14.7 s; with 20 groups asked of the keyword and dense pool 40.7 / 52.5 s,
1,158 MB (the embedding model loaded); grouping precision 1.000, recall 0.962.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import string
import tempfile
import time
from collections import Counter
from pathlib import Path

import sqlalchemy as sa

from assay.candidates.importing import import_candidates
from assay.candidates.sampling import sample
from assay.corpus.ingest import ingest_bytes
from assay.store.candidates_schema import candidates
from assay.store.projects import create_project
from assay.store.settings import Settings
from assay.store.workspace import Workspace

TEMPLATES = [
    "How do I {a} the {b} for {c}?",
    "What does the {a} {b} cost in {c}?",
    "Can I {a} my {b} after {c}?",
    "Where is the {a} of the {b} near {c}?",
    "Why was my {a} {b} refused at {c}?",
    "When does the {a} {b} open on {c}?",
    "Is there a {a} for {b} users in {c}?",
    "Who approves a {a} {b} for {c}?",
]


def words(rng: random.Random, n: int) -> list[str]:
    made: set[str] = set()
    while len(made) < n:
        made.add("".join(rng.choices(string.ascii_lowercase, k=rng.randint(4, 9))))
    return sorted(made)


def reword(rng: random.Random, question: str) -> str:
    def typo(text: str) -> str:
        parts = text.split()
        i = rng.randrange(len(parts))
        w = parts[i]
        if len(w) > 3:
            j = rng.randrange(len(w) - 1)
            parts[i] = w[:j] + w[j + 1] + w[j] + w[j + 2 :]
        return " ".join(parts)

    def drop(text: str) -> str:
        parts = text.split()
        del parts[rng.randrange(1, len(parts))]
        return " ".join(parts)

    edits = [
        lambda t: t.lower().rstrip("?"),
        typo,
        lambda t: t.rstrip("?") + " please?",
        lambda t: "hi, " + t[0].lower() + t[1:],
        drop,
    ]
    chosen = rng.sample(edits, rng.choice((1, 1, 2)))
    for edit in chosen:
        question = edit(question)
    return question


def generate(
    n: int, dupes: float, docs: list[tuple[str, list[str]]], seed: int = 33
) -> tuple[list[str], list[int], int]:
    """The log lines, per line the number of the question it was made from, and how many
    lines are planted near-duplicates."""
    rng = random.Random(seed)
    vocab = words(rng, 2_000)
    bases: list[str] = []
    lines: list[str] = []
    truth: list[int] = []
    planted = 0
    for number in range(n):
        if bases and rng.random() < dupes:
            base = rng.randrange(len(bases))
            question = reword(rng, bases[base])
            planted += 1
        else:
            template = rng.choice(TEMPLATES)
            question = template.format(
                a=rng.choice(vocab), b=rng.choice(vocab), c=rng.choice(vocab)
            )
            question = (
                question.rstrip("?") + " " + " ".join(rng.choices(vocab, k=rng.randint(2, 4)))
            )
            question += "?"
            base = len(bases)
            bases.append(question)
        if rng.random() < 0.02:
            question += rng.choice(
                (f" mail me at user{number}@example.com", f" call +49 30 {number:07d}")
            )
        name, sentences = rng.choice(docs)
        passages = [{"doc": name, "text": rng.choice(sentences)}]
        if rng.random() < 0.1:
            passages.append({"text": f"An old page number {number % 500} from another site."})
        record: dict[str, object] = {"question": question, "answer": passages[0]["text"],
                                     "passages": passages}  # fmt: skip
        if rng.random() < 0.125:
            record["feedback"] = "thumbs_down"
        if rng.random() < 0.05:
            record["session_id"] = f"s{number // 2}"
        lines.append(json.dumps(record))
        truth.append(base)
    return lines, truth, planted


def make_docs(rng: random.Random) -> list[tuple[str, list[str]]]:
    vocab = words(rng, 500)
    docs = []
    for d in range(20):
        sentences = [
            " ".join(rng.choices(vocab, k=rng.randint(8, 16))).capitalize() + "." for _ in range(30)
        ]
        docs.append((f"doc-{d:02d}.md", sentences))
    return docs


def pairs(sizes: Counter[object]) -> int:
    return sum(k * (k - 1) // 2 for k in sizes.values())


def score(groups: list[int], truth: list[int]) -> tuple[float, float]:
    """Pairwise precision and recall of ``groups`` against ``truth`` (line by line)."""
    both = pairs(Counter(zip(groups, truth, strict=True)))
    predicted = pairs(Counter(groups))
    real = pairs(Counter(truth))
    return (both / predicted if predicted else 1.0, both / real if real else 1.0)


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def one_round(
    home: Path,
    url: str | None,
    lines: list[str],
    docs: list[tuple[str, list[str]]],
    args: argparse.Namespace,
) -> tuple[list[float], list[float], list[int], int]:
    """Times (import, sample, sample asking the retrievers) and the peak memory after each."""
    settings = Settings(home=home, database_url=url) if url else Settings(home=home)
    ws = Workspace.open(settings)
    try:
        project = create_project(ws, "bench")
        for name, sentences in docs:
            ingest_bytes(ws, project, name, "\n\n".join(sentences).encode())
        times, peaks = [], []
        started = time.perf_counter()
        report = import_candidates(ws, project, lines, name="bench.jsonl")
        times.append(time.perf_counter() - started)
        peaks.append(rss_mb())
        for difficulty in (0, args.difficulty):
            started = time.perf_counter()
            picked = sample(ws, project, args.sample, difficulty=difficulty)
            times.append(time.perf_counter() - started)
            peaks.append(rss_mb())
            assert len(picked.picks) == args.sample
        with ws.engine.connect() as conn:
            groups = list(
                conn.scalars(
                    sa.select(candidates.c.group_id)
                    .where(candidates.c.project_id == project.id)
                    .order_by(candidates.c.id)
                )
            )
        return times, peaks, groups, report.grouping.groups if report.grouping else 0
    finally:
        ws.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--dupes", type=float, default=0.2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sample", type=int, default=50)
    parser.add_argument("--difficulty", type=int, default=20)
    parser.add_argument("--postgres", default=None, help="a PostgreSQL URL (default: SQLite)")
    args = parser.parse_args()
    docs = make_docs(random.Random(7))
    lines, truth, planted = generate(args.lines, args.dupes, docs)
    before = rss_mb()
    rounds: list[list[float]] = []
    peaks: list[float] = []
    found: list[int] = []
    groups = 0
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory() as folder:
            if args.postgres:
                import uuid

                name = f"bench_{uuid.uuid4().hex[:8]}"
                admin = sa.create_engine(args.postgres, isolation_level="AUTOCOMMIT")
                with admin.connect() as conn:
                    conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
                url = args.postgres.rsplit("/", 1)[0] + "/" + name
            else:
                url = None
            times, peak, found, groups = one_round(Path(folder) / "ws", url, lines, docs, args)
            rounds.append(times)
            peaks = peaks or peak  # the first round's: later rounds reuse freed memory
    precision, recall = score(found, truth)
    share = planted / len(lines)
    print(f"lines {len(lines):,}, planted near-duplicates {planted:,} ({share:.0%}), "
          f"groups {groups:,} (distinct questions {len(set(truth)):,})")  # fmt: skip
    names = (
        "import (scrub, anchor, store, group, cluster)",
        f"sample of {args.sample}, difficulty not asked",
        f"sample of {args.sample}, {args.difficulty} groups asked of the project's pool",
    )
    for n, name in enumerate(names):
        took = [r[n] for r in rounds]
        middle = statistics.median(took)
        print(f"{name}: min {min(took):.1f} s, median {middle:.1f} s over {len(rounds)} "
              f"rounds; peak resident memory after it {peaks[n]:.0f} MB")  # fmt: skip
    print(f"resident memory before the rounds (the log generated): {before:.0f} MB")
    print(f"grouping on the planted duplicates: precision {precision:.3f}, recall {recall:.3f}")
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
