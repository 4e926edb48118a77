"""Classifier corpus, part 2: the programs that matter (gh, network clients, deploy tools,
file writers and deleters), odd input, and Gemini CLI's ``run_shell_command``."""

from __future__ import annotations

import pytest

from exomonad.policy.actions import (
    Action,
    CloseIssue,
    ClosePR,
    CreatePR,
    DeleteFile,
    Deploy,
    GitCommit,
    MergePR,
    Network,
    ReadFile,
    WriteFile,
)
from exomonad.policy.classify import classify
from exomonad.policy.request import Runtime, ToolRequest
from tests.policy.corpus import (
    ANY_UNKNOWN,
    BR,
    HOME,
    Case,
    W,
    bash,
    delbr,
    gsh,
    push,
    same,
    sh,
)

BRANCHES_AND_GH: list[Case] = [
    bash("git branch -D old", delbr("old")),
    bash("git branch -d old new", delbr("old", force=False), delbr("new", force=False)),
    bash("git branch --delete --force old", delbr("old")),
    bash("git branch -r -d origin/old", delbr("origin/old", "<remote-tracking>", False)),
    bash("git branch new-feature", sh("git", "branch", "new-feature")),
    bash("git branch -m old new", sh("git", "branch", "-m", "old", "new")),
    bash("git branch", sh("git", "branch")),
    bash("gh pr create --base main --title 'x' --body 'y'", CreatePR("main", None)),
    bash("gh pr create -B develop -H feat/x", CreatePR("develop", "feat/x")),
    bash("gh pr create --fill", CreatePR(None, None)),
    bash("gh pr merge 42 --squash --delete-branch", MergePR(42)),
    bash("gh pr merge https://github.com/o/r/pull/17", MergePR(17)),
    bash("gh pr merge --auto --merge", MergePR(None)),
    bash("gh pr merge '#9'", MergePR(9)),
    bash("gh pr close 5", ClosePR(5)),
    bash("gh issue close 12 --reason completed", CloseIssue(12)),
    bash("gh issue close https://github.com/o/r/issues/3", CloseIssue(3)),
    bash("gh issue delete 4 --yes", CloseIssue(4)),
    bash("gh pr view 3", sh("gh", "pr", "view", "3")),
    bash("gh pr list --state open", sh("gh", "pr", "list", "--state", "open")),
    bash("gh issue list", sh("gh", "issue", "list")),
    bash("gh -R owner/repo pr merge 8", MergePR(8)),
    bash("gh api repos/o/r/pulls", sh("gh", "api", "repos/o/r/pulls")),
    bash("gh api -X PUT repos/o/r/pulls/1/merge", ANY_UNKNOWN),
    bash("gh api repos/o/r/issues -f title=x", ANY_UNKNOWN),
    bash("gh release create v1.0", Deploy("gh", "release create")),
    bash("gh repo delete o/r --yes", ANY_UNKNOWN),
    bash("gh workflow run deploy.yml", Deploy("gh", "workflow run")),
    bash("gh auth status", sh("gh", "auth", "status")),
]

NETWORK: list[Case] = [
    bash("curl https://example.com", Network("example.com")),
    bash(
        "curl -sSL -o out.tgz https://Example.COM:8443/a.tgz",
        WriteFile(f"{W}/out.tgz"),
        Network("example.com"),
    ),
    bash(
        "curl -X POST -H 'Content-Type: application/json' -d '{\"a\":1}' https://api.x.io/v1",
        Network("api.x.io"),
    ),
    bash("curl --url https://a.io/x", Network("a.io")),
    bash("curl localhost:8080/health", Network("localhost")),
    bash("wget -q -O - https://b.org/x", Network("b.org")),
    bash(
        "wget https://c.net/file.tar.gz && tar xzf file.tar.gz",
        Network("c.net"),
        WriteFile(W),  # where it unpacks
        sh("tar", "xzf", "file.tar.gz"),
    ),
    bash("curl $URL", Network(None)),
    bash("http POST api.example.com/items name=x", Network("api.example.com")),
    bash("ssh deploy@prod.example.com 'systemctl restart app'", Network("prod.example.com")),
    bash("ssh -i ~/.ssh/id -p 2222 host.io", Network("host.io")),
    bash(
        "scp build.tgz user@files.example.com:/srv/",
        Network("files.example.com"),
        ReadFile(f"{W}/build.tgz"),
    ),
    bash(
        "rsync -avz dist/ web@cdn.example.com:/var/www/",
        Network("cdn.example.com"),
        ReadFile(f"{W}/dist", recursive=True),
    ),
    bash(
        "rsync -a src/ dst/",
        WriteFile(f"{W}/dst"),  # its destination
        sh("rsync", "-a", "src/", "dst/"),
        ReadFile(f"{W}/src", recursive=True),
    ),
    bash("nc -z db.internal 5432", Network("db.internal")),
    bash("pip install requests", sh("pip", "install", "requests")),
    bash("npm install", sh("npm", "install")),
]

DEPLOY: list[Case] = [
    bash("kubectl apply -f k8s/", Deploy("kubectl", "apply")),
    bash("kubectl -n prod delete pod x", Deploy("kubectl", "delete")),
    bash("kubectl get pods", sh("kubectl", "get", "pods")),
    bash("kubectl --context staging rollout restart deploy/app", Deploy("kubectl", "rollout")),
    bash("kubectl apply -f x.yaml --dry-run=client", Deploy("kubectl", "apply")),
    bash("terraform apply -auto-approve", Deploy("terraform", "apply")),
    bash("terraform -chdir=infra apply", Deploy("terraform", "apply")),
    bash("terraform plan", sh("terraform", "plan")),
    bash("terraform destroy", Deploy("terraform", "destroy")),
    bash("helm upgrade --install app ./chart", Deploy("helm", "upgrade")),
    bash("fly deploy", Deploy("fly", "deploy")),
    bash("flyctl deploy --app x", Deploy("flyctl", "deploy")),
    bash("fly logs", sh("fly", "logs")),
    bash("vercel --prod", Deploy("vercel", "production")),
    bash("vercel", Deploy("vercel", "preview")),
    bash("vercel deploy --prod --token $T", Deploy("vercel", "production")),
    bash("vercel env ls", sh("vercel", "env", "ls")),
    bash("netlify deploy --prod", Deploy("netlify", "deploy")),
    bash("npm publish --access public", Deploy("npm", "publish")),
    bash("npm run build", sh("npm", "run", "build")),
    bash("twine upload dist/*", Deploy("twine", "upload")),
    bash("cargo publish", Deploy("cargo", "publish")),
    bash("cargo build --release", sh("cargo", "build", "--release")),
    bash("docker push ghcr.io/o/app:1.0", Deploy("docker", "push")),
    bash("docker build -t app .", sh("docker", "build", "-t", "app", ".")),
    bash("aws s3 sync dist/ s3://bucket", Deploy("aws", "s3 sync")),
    bash("aws s3 ls", sh("aws", "s3", "ls")),
    bash("aws ecs update-service --cluster c --service s", Deploy("aws", "ecs update-service")),
    bash("aws sts get-caller-identity", sh("aws", "sts", "get-caller-identity")),
    bash("gcloud run deploy app --source .", Deploy("gcloud", "run deploy")),
    bash("gcloud config list", sh("gcloud", "config", "list")),
    bash("ansible-playbook -i inv site.yml", Deploy("ansible-playbook")),
    bash("pulumi up --yes", Deploy("pulumi", "up")),
    bash("wrangler deploy", Deploy("wrangler", "deploy")),
    bash("firebase deploy --only hosting", Deploy("firebase", "deploy")),
]

FILES: list[Case] = [
    bash("rm -rf /", DeleteFile("/", True)),
    bash("rm -rf /*", DeleteFile("/*", True)),
    bash("rm -rf ~", DeleteFile(HOME, True)),
    bash("rm -rf ~/", DeleteFile(HOME, True)),
    bash("rm -rf build dist", DeleteFile(f"{W}/build", True), DeleteFile(f"{W}/dist", True)),
    bash("rm file.txt", DeleteFile(f"{W}/file.txt", False)),
    bash("rm -r -f ../other", DeleteFile("/w/other", True)),
    bash('rm -rf "$DIR"', DeleteFile(None, True)),
    bash("rm -rf $HOME", DeleteFile(None, True)),
    bash("rm -- -weird", DeleteFile(f"{W}/-weird", False)),
    bash("rm --recursive --force /tmp/x", DeleteFile("/tmp/x", True)),
    bash("rmdir empty", DeleteFile(f"{W}/empty", False)),
    bash("find . -name '*.pyc' -delete", DeleteFile(W, True, ("*.pyc",))),
    bash(
        "find /tmp/x -type f -exec rm {} \\;",
        ReadFile("/tmp/x", recursive=True),
        DeleteFile(None, False),
    ),
    bash("find . -name '*.log'", sh("find", ".", "-name", "*.log")),
    bash("echo hi > out.txt", WriteFile(f"{W}/out.txt"), sh("echo", "hi")),
    bash("echo hi >> /etc/hosts", WriteFile("/etc/hosts"), sh("echo", "hi")),
    bash("ls > /dev/null 2>&1", sh("ls")),
    bash("make 2> err.log", WriteFile(f"{W}/err.log"), sh("make")),
    bash("cmd &> all.log", WriteFile(f"{W}/all.log"), sh("cmd")),
    bash(
        "cat a.txt | tee b.txt", ReadFile(f"{W}/a.txt"), sh("cat", "a.txt"), WriteFile(f"{W}/b.txt")
    ),
    # A reader's files are reads, judged as the Read tool's (credentials refused): before,
    # `cat ~/.ssh/id_rsa` was a plain command and allowed while Read of it was denied.
    bash(
        "cat -n ~/.ssh/id_rsa",
        ReadFile(f"{HOME}/.ssh/id_rsa"),
        sh("cat", "-n", f"{HOME}/.ssh/id_rsa"),
    ),
    bash(
        "head -n 5 .env x",
        ReadFile(f"{W}/.env"),
        ReadFile(f"{W}/x"),
        sh("head", "-n", "5", ".env", "x"),
    ),
    bash(
        "grep -n tok /proc/42/environ",
        ReadFile("/proc/42/environ"),
        sh("grep", "-n", "tok", "/proc/42/environ"),
    ),
    bash("grep -e a -e b f", ReadFile(f"{W}/f"), sh("grep", "-e", "a", "-e", "b", "f")),
    bash(
        "sed -n 1p $HOME/.aws/credentials",
        ReadFile(f"{HOME}/.aws/credentials"),
        sh("sed", "-n", "1p", "$HOME/.aws/credentials"),
    ),
    bash(
        "jq -r .auths ~/.docker/config.json",
        ReadFile(f"{HOME}/.docker/config.json"),
        sh("jq", "-r", ".auths", f"{HOME}/.docker/config.json"),
    ),
    bash('cat "$f"', sh("cat", "$f")),  # an unknown path: the plain command, as before
    bash("sort | uniq -c", sh("sort"), sh("uniq", "-c")),  # stdin: no file read
    # jq's two-value options: --rawfile/--slurpfile read their file (not the filter).
    bash(
        "jq -n --rawfile k ~/.ssh/id_rsa '$k'",
        ReadFile(f"{HOME}/.ssh/id_rsa"),
        sh("jq", "-n", "--rawfile", "k", f"{HOME}/.ssh/id_rsa", "$k"),
    ),
    bash(
        "jq --arg a b .x f.json",
        ReadFile(f"{W}/f.json"),
        sh("jq", "--arg", "a", "b", ".x", "f.json"),
    ),
    bash("column -t ~/.netrc", ReadFile(f"{HOME}/.netrc"), sh("column", "-t", f"{HOME}/.netrc")),
    bash("look '' ~/.netrc", ReadFile(f"{HOME}/.netrc"), sh("look", "", f"{HOME}/.netrc")),
    bash("cp a.txt /etc/x", ReadFile(f"{W}/a.txt"), WriteFile("/etc/x")),
    bash("cp -r src/ /tmp/backup", ReadFile(f"{W}/src", recursive=True), WriteFile("/tmp/backup")),
    bash(
        "cp -t /opt/dest a b",
        ReadFile(f"{W}/a"),
        ReadFile(f"{W}/b"),
        WriteFile("/opt/dest"),
        WriteFile("/opt/dest/a"),
        WriteFile("/opt/dest/b"),
    ),
    bash("mv old.py new.py", WriteFile(f"{W}/new.py"), DeleteFile(f"{W}/old.py", True)),
    bash("touch a b", WriteFile(f"{W}/a"), WriteFile(f"{W}/b")),
    bash("mkdir -p build/out", WriteFile(f"{W}/build/out")),
    bash("chmod +x script.sh", WriteFile(f"{W}/script.sh")),
    bash("chmod -R 755 /srv", WriteFile("/srv")),
    # A symbolic mode that looks like an option: `chmod -x` of the pre-push gate was read
    # as "chmod with option -x, mode = the path" and allowed (the gate off, unasked).
    bash("chmod -x /w/.git/exomonad-hooks/pre-push", WriteFile("/w/.git/exomonad-hooks/pre-push")),
    bash("chmod -R -w,o-r a b", WriteFile(f"{W}/a"), WriteFile(f"{W}/b")),
    bash("chmod -x script.sh", WriteFile(f"{W}/script.sh")),
    bash("sed -i 's/a/b/' file.py", WriteFile(f"{W}/file.py")),
    bash("sed -i.bak -e 's/a/b/' a.py b.py", WriteFile(f"{W}/a.py"), WriteFile(f"{W}/b.py")),
    bash("sed 's/a/b/' file.py", ReadFile(f"{W}/file.py"), sh("sed", "s/a/b/", "file.py")),
    bash("dd if=/dev/zero of=/dev/sda bs=1M", ReadFile("/dev/zero"), WriteFile("/dev/sda")),
    bash("dd if=$HOME/.ssh/id_rsa of=k", ReadFile(f"{HOME}/.ssh/id_rsa"), WriteFile(f"{W}/k")),
    bash("dd if=/root/.ssh/id_rsa of=k", ReadFile("/root/.ssh/id_rsa"), WriteFile(f"{W}/k")),
    # An input redirection reads its file, whatever the program (`cat < ~/.ssh/id_rsa`).
    bash("tr a b < ~/.aws/credentials", ReadFile(f"{HOME}/.aws/credentials"), sh("tr", "a", "b")),
    bash("python3 x.py < in.json", ReadFile(f"{W}/in.json"), sh("python3", "x.py")),
    bash("wc -l < /dev/null", sh("wc", "-l")),
    bash("truncate -s 0 log.txt", WriteFile(f"{W}/log.txt")),
    bash(  # the link makes its target writable through it: a write of the target too
        "ln -s target link",
        ReadFile(f"{W}/target", recursive=True),
        WriteFile(f"{W}/link"),
        WriteFile(f"{W}/target"),
    ),
    bash("cat > /tmp/x.py <<'EOF'\nprint(1)\nEOF", WriteFile("/tmp/x.py"), sh("cat")),
]

MISC: list[Case] = [
    bash("ls -la", sh("ls", "-la")),
    bash("pytest -q tests/", sh("pytest", "-q", "tests/")),
    bash("make test", sh("make", "test")),
    bash("npx prettier --write .", sh("npx", "prettier", "--write", ".")),
    bash("", ANY_UNKNOWN),
    bash("echo 'unterminated", ANY_UNKNOWN),
    bash("git push origin main )", ANY_UNKNOWN),
    bash("echo $(unterminated", ANY_UNKNOWN),
]

GEMINI_SHELL: list[Case] = [
    gsh("git push -f origin main", push("origin", "main", force=True)),
    gsh("git push", push(None, BR, repo=f"{W}/sub"), directory="sub"),
    gsh("ls -la", sh("ls", "-la")),
    gsh("npm test && git commit -am x", sh("npm", "test"), GitCommit(W)),
    gsh("gh pr merge 3", MergePR(3)),
    gsh("curl -s https://pypi.org/simple/", Network("pypi.org")),
    gsh("rm -rf node_modules", DeleteFile(f"{W}/node_modules", True)),
    gsh("sh -c 'git push origin HEAD:main'", push("origin", "main")),
    gsh("kubectl apply -f k.yaml", Deploy("kubectl", "apply")),
    gsh('echo "gh pr merge 1"', sh("echo", "gh pr merge 1")),
    gsh("cd /tmp && rm -rf *", DeleteFile("/tmp/*", True)),
    gsh("git push origin feat/x --force-with-lease", push("origin", BR, True, True)),
]

PROGRAMS_CORPUS: list[Case] = BRANCHES_AND_GH + NETWORK + DEPLOY + FILES + MISC + GEMINI_SHELL


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", HOME)


@pytest.mark.parametrize(
    ("runtime", "tool", "data", "expected"),
    PROGRAMS_CORPUS,
    ids=[f"{c[0]}:{c[2]['command'][:50]}" for c in PROGRAMS_CORPUS],
)
def test_programs_corpus(
    runtime: Runtime, tool: str, data: dict[str, object], expected: list[Action]
) -> None:
    request = ToolRequest(runtime, "dev", "dev1", tool, data, cwd=W, worktree=W, branch=BR)
    actual = classify(request)
    assert same(actual, expected), actual
