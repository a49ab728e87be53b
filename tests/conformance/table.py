"""The README's table of conformance cases, rendered from ``cases/*.toml``.

Run ``python -m tests.conformance.table`` to rewrite it after changing a case.
"""

from __future__ import annotations

from pathlib import Path

from tests.conformance.cases import Case, load_cases

README = Path(__file__).parent / "README.md"
BEGIN, END = "<!-- cases: begin -->", "<!-- cases: end -->"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def render_table(cases: list[Case]) -> str:
    lines = [
        BEGIN,
        "| # | Kafka file | test | tag | release | what it asserts | what the model shows |",
        "|---|---|---|---|---|---|---|",
    ]
    for number, case in enumerate(cases, start=1):
        shows = case.shows
        if case.missing:
            shows = f"not replayed: the model lacks {case.missing}"
        elif case.differs:
            shows = f"**differs**: {case.differs}"
        elif case.before_fix:
            fix = case.before_fix
            shows += f" Before the fix ({fix['release']}): {fix['violates']} violated."
        name = Path(case.kafka_file).name
        lines.append(
            f"| {number} | `{name}` | `{case.kafka_test}` | {case.tag} | {case.release} | "
            f"{_cell(case.asserts)} | {_cell(shows)} |"
        )
    lines.append(END)
    return "\n".join(lines)


def main() -> None:
    text = README.read_text()
    start, end = text.index(BEGIN), text.index(END) + len(END)
    README.write_text(text[:start] + render_table(load_cases()) + text[end:])


if __name__ == "__main__":
    main()
