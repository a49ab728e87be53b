"""The harness's build cache: one build per release and the sources it compiles."""

from __future__ import annotations

from replcheck.harness import build


def test_a_build_is_kept_until_its_own_sources_change(tmp_path, monkeypatch):
    files = (
        "pom.xml",
        "src/main/scala/Main.scala",
        "src/k33/C.scala",
        "src/k44/C.scala",
        "src/k40-shared/S.scala",
    )
    for rel in files:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(rel)
    monkeypatch.setattr(build, "JVM_SOURCE", tmp_path)
    k33, k44 = build.source_hash("k33"), build.source_hash("k44")
    assert k33 != k44
    (tmp_path / "src/k44/C.scala").write_text("changed")  # another family's Compat
    assert build.source_hash("k33") == k33 and build.source_hash("k44") != k44
    k40 = build.source_hash("k40")
    (tmp_path / "src/k40-shared/S.scala").write_text("changed")  # what 4.0 and 4.1 share
    assert build.source_hash("k40") != k40 and build.source_hash("k33") == k33
    (tmp_path / "src/main/scala/Main.scala").write_text("changed")  # the common code
    assert build.source_hash("k33") != k33
