"""The harness's build cache: one build per release and the sources it compiles."""

from __future__ import annotations

from replcheck.harness import build


def test_a_build_is_kept_until_its_own_sources_change(tmp_path, monkeypatch):
    for rel in ("pom.xml", "src/main/scala/Main.scala", "src/k33/C.scala", "src/k44/C.scala"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(rel)
    monkeypatch.setattr(build, "JVM_SOURCE", tmp_path)
    k33, k44 = build.source_hash("k33"), build.source_hash("k44")
    assert k33 != k44
    (tmp_path / "src/k44/C.scala").write_text("changed")  # another family's Compat
    assert build.source_hash("k33") == k33 and build.source_hash("k44") != k44
    (tmp_path / "src/main/scala/Main.scala").write_text("changed")  # the common code
    assert build.source_hash("k33") != k33
