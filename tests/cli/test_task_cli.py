"""``exomonad task``: exit codes, --json output, human output, no team config needed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner, Result

from exomonad.cli.task import app
from exomonad.teams.paths import TeamPaths
from exomonad.teams.tasks import TaskStore


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLAUDE_CODE_TASK_LIST_ID", raising=False)
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)


class Cli:
    """Runs ``exomonad task ...`` against a temp config root."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.runner = CliRunner()

    def __call__(self, *args: str, code: int = 0) -> Result:
        result = self.runner.invoke(app, [*args, "--config-dir", str(self.root)])
        assert result.exit_code == code, (result.stdout, result.stderr)
        return result

    def json(self, *args: str) -> Any:
        return orjson.loads(self(*args, "--json").stdout)

    def store(self, team: str = "alpha") -> TaskStore:
        return TaskStore(TeamPaths(team, root=self.root))


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path)


def test_create_json_is_the_file_on_disk(cli: Cli) -> None:
    out = cli.json(
        "create", "alpha", "parse", "-d", "write it", "--owner", "w1", "--active-form", "Parsing"
    )
    assert out == {
        "id": "1",
        "subject": "parse",
        "description": "write it",
        "activeForm": "Parsing",
        "owner": "w1",
        "status": "pending",
        "blocks": [],
        "blockedBy": [],
    }
    assert orjson.loads(cli.store().path("1").read_bytes()) == out
    assert not cli.store().paths.config_file.exists()  # no team config needed


def test_create_blocked_by_repeats(cli: Cli) -> None:
    cli("create", "alpha", "a")
    cli("create", "alpha", "b")
    out = cli.json("create", "alpha", "c", "--blocked-by", "1", "--blocked-by", "2")
    assert out["blockedBy"] == ["1", "2"]
    assert cli.json("get", "alpha", "1")["blocks"] == ["3"]
    result = cli("create", "alpha", "d", "--blocked-by", "9", code=1)
    assert "9 not found" in result.stderr


def test_create_human_output(cli: Cli) -> None:
    result = cli("create", "alpha", "fix [bold]bug[/bold]")
    assert "Created task #1: fix [bold]bug[/bold]" in result.stdout  # markup shown literally


def test_list_json_table_and_status_filter(cli: Cli) -> None:
    for s in ("a", "b", "c"):
        cli("create", "alpha", s)
    cli("update", "alpha", "2", "--status", "completed")
    assert [t["id"] for t in cli.json("list", "alpha")] == ["1", "2", "3"]
    assert [t["id"] for t in cli.json("list", "alpha", "--status", "pending")] == ["1", "3"]
    table = cli("list", "alpha", "--status", "completed").stdout
    assert "Subject" in table
    assert "│ 2" in table
    assert "│ 1" not in table


def test_list_empty_and_bad_status(cli: Cli) -> None:
    assert cli.json("list", "nobody") == []
    assert "No tasks" in cli("list", "nobody").stdout
    cli("list", "alpha", "--status", "done", code=2)


def test_list_skips_corrupt_files_with_a_warning(cli: Cli) -> None:
    cli("create", "alpha", "good")
    bad = cli.store().dir / "2.json"
    bad.write_bytes(b"{oops")
    result = cli("list", "alpha", "--json")
    assert [t["id"] for t in orjson.loads(result.stdout)] == ["1"]
    assert "2.json" in result.stderr
    assert bad.read_bytes() == b"{oops"
    assert "2.json" in cli("get", "alpha", "2", code=1).stderr


def test_get_missing_and_bad_names(cli: Cli) -> None:
    assert "not found" in cli("get", "alpha", "1", code=1).stderr
    cli("get", "../evil", "1", code=2)
    cli("get", "alpha", "../1", code=2)
    cli("get", "alpha", code=2)  # missing argument


def test_update_fields_and_owner_removal(cli: Cli) -> None:
    cli("create", "alpha", "a", "--owner", "w1")
    out = cli.json(
        "update",
        "alpha",
        "1",
        "--subject",
        "A",
        "--status",
        "in_progress",
        "-d",
        "more",
        "--owner",
        "",
    )
    assert (out["subject"], out["status"], out["description"]) == ("A", "in_progress", "more")
    assert "owner" not in out
    assert "Updated task #1: A" in cli("update", "alpha", "1", "--owner", "w2").stdout
    assert cli.json("get", "alpha", "1")["owner"] == "w2"


def test_update_usage_errors(cli: Cli) -> None:
    cli("create", "alpha", "a")
    assert "nothing to update" in cli("update", "alpha", "1", code=2).stderr
    cli("update", "alpha", "1", "--status", "finished", code=2)
    cli("update", "alpha", "7", "--status", "completed", code=1)
    assert cli.json("get", "alpha", "1")["status"] == "pending"


def test_claim_rules_and_exit_codes(cli: Cli) -> None:
    cli("create", "alpha", "a")
    cli("create", "alpha", "b", "--blocked-by", "1")
    assert "blocked by open task(s) 1" in cli("claim", "alpha", "2", "--owner", "w1", code=1).stderr
    out = cli.json("claim", "alpha", "1", "--owner", "w1")
    assert (out["owner"], out["status"]) == ("w1", "in_progress")
    assert cli.json("claim", "alpha", "1", "--owner", "w1")["owner"] == "w1"  # idempotent
    assert "already owned by 'w1'" in cli("claim", "alpha", "1", "--owner", "w2", code=1).stderr
    cli("update", "alpha", "1", "--status", "completed")
    assert "already completed" in cli("claim", "alpha", "1", "--owner", "w1", code=1).stderr
    assert "w2 claimed task #2" in cli("claim", "alpha", "2", "--owner", "w2").stdout
    cli("claim", "alpha", "2", code=2)  # --owner is required


def test_delete_cleans_references(cli: Cli) -> None:
    cli("create", "alpha", "a")
    cli("create", "alpha", "b", "--blocked-by", "1")
    assert cli.json("delete", "alpha", "1") == {"deleted": "1"}
    assert cli.json("get", "alpha", "2")["blockedBy"] == []
    assert "not found" in cli("delete", "alpha", "1", code=1).stderr
    assert cli.json("create", "alpha", "c")["id"] == "3"  # ids are not reused
    assert "Deleted task #3" in cli("delete", "alpha", "3").stdout


def test_config_dir_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))
    result = CliRunner().invoke(app, ["create", "beta", "x", "--json"])
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "tasks" / "beta" / "1.json").is_file()
