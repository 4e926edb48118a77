"""Adversarial shell commands that try to move or delete the remote's ``main``.

Every command is run for real by :mod:`tests.policy.test_bypass_corpus` in a worktree on
``exo/w1`` whose ``origin`` is a local bare repository: ``main`` of the lead's checkout is
one commit ahead of ``origin/main`` and ``exo/w1`` one more, so a push of either to
``main`` is a fast-forward and really moves it. ``$ORIGIN`` is that bare repository's path
(the commands refer to it as ``../../../origin.git``, relative to the worktree).
"""

from __future__ import annotations

from tests.policy import bypass_detach

_F = "git push -f origin main"
_P = "git push origin exo/w1:main"

#: (family, command). None of these may be allowed for a worker or a dev.
BYPASSES: list[tuple[str, str]] = [
    # ANSI-C and locale quoting
    *(
        ("ansi-c", c)
        for c in (
            "$'git' push -f origin $'main'",
            "git push -f origin $'\\x6dain'",
            "git push -f origin $'\\155ain'",
            "git push -f origin $'\\u006dain'",
            "$'\\x67it' push -f origin main",
            "git $'push' $'-f' origin main",
            "git push $'--force' origin main",
            "git push origin $'+main'",
            "git push origin $'HEAD:main'",
            "git push origin $'\\x3amain'",
            'git push -f origin $"main"',
            "g$'i't push -f origin main",
            "git push -f origin ma$'i'n",
            "git push -f origin $'\\U0000006dain'",
            "$'\\147\\151\\164' push -f origin main",
            "git push -f origin $'main\\0x'",
            "git push origin $'exo/w1:\\x6d\\x61\\x69\\x6e'",
            "g\\it push -f origin m\\ain",
            "'git' 'push' '-f' 'origin' 'main'",
            'git push -f origin ma""in',
        )
    ),
    # brace expansion and globs
    *(
        ("brace-glob", c)
        for c in (
            "{git,push,-f,origin,main}",
            "/usr/bin/gi? push -f origin main",
            "/usr/bin/gi[t] push -f origin main",
            "git {push,-f,origin,main}",
            "git push {-f,origin,main}",
            "git push -f origin {main,}",
            "git push -f origin {main,exo/w1}",
            "git push origin {HEAD:main,exo/w1}",
            "timeout {5,git} push -f origin main",
            "env {git,push} -f origin main",
            "touch main && git push -f origin ma?n",
            "touch main; git push -f origin m*",
            "touch push; git p?sh -f origin main",
            "{/usr/bin/git,push,-f,origin,main}",
            "echo; {git,push,--force,origin,main}",
            "git push origin exo/w1:{main,x}",
            "/usr/lib/git-core/git-pus? -f origin main",
            "git push origin exo/w1:ma[i]n",
        )
    ),
    # git's own programs
    *(
        ("git-programs", c)
        for c in (
            "git-push -f origin main",
            "/usr/lib/git-core/git-push -f origin main",
            "/usr/lib/git-core/git push -f origin main",
            "git send-pack --force ../../../origin.git exo/w1:refs/heads/main",
            "/usr/lib/git-core/git-send-pack --force ../../../origin.git exo/w1:refs/heads/main",
            "git --exec-path=/usr/lib/git-core push -f origin main",
            "PATH=/usr/lib/git-core:$PATH git-push -f origin main",
            "env PATH=/usr/lib/git-core:/usr/bin:/bin git-push -f origin main",
            "exec -a git /usr/lib/git-core/git push -f origin main",
            "GIT_EXEC_PATH=/usr/lib/git-core git push origin exo/w1",
            "git http-push ../../../origin.git main",
            "git --namespace=x push -f origin main",
        )
    ),
    # functions, coproc, scripts fed to a shell
    *(
        ("function-stdin", c)
        for c in (
            "function f { " + _F + "; }; f",
            "function f { " + _F + "; }\nf",
            "function f() { " + _F + "; }; f",
            "function f\n{\n" + _F + "\n}\nf",
            "f() ( " + _F + " ); f",
            "coproc " + _F + "; wait",
            "coproc P { " + _F + "; }; wait",
            "coproc { " + _F + "; }; wait",
            "echo '" + _F + "' | sh -",
            "sh - <<< '" + _F + "'",
            "bash /dev/stdin <<< '" + _F + "'",
            "bash /dev/stdin <<'EOF'\n" + _F + "\nEOF",
            "bash <(echo '" + _F + "')",
            "bash <(echo " + _F + ")",
            "sh <(printf '" + _F + "')",
            "bash < <(echo '" + _F + "')",
            "source <(echo '" + _F + "')",
            ". <(echo '" + _F + "')",
            ". /dev/stdin <<< '" + _F + "'",
            "bash -s <<< '" + _F + "'",
            "bash -s -- x <<< '" + _F + "'",
            "cat <<< '" + _F + "' | bash",
            "bash /dev/fd/0 <<< '" + _F + "'",
            "bash /proc/self/fd/0 <<< '" + _F + "'",
            'sh -c "$(echo ' + _F + ')"',
            'eval "$(echo ' + _F + ')"',
            "eval $(echo " + _F + ")",
            "X='" + _F + "'; $X",
            "X='" + _F + "'; eval $X",
            "X='" + _F + '\'; bash -c "$X"',
            'bash <<< "$(echo ' + _F + ')"',
            "sh -c 'git push \"$@\"' _ -f origin main",
            "sh -c 'git push -f origin \"$1\"' _ main",
            "bash -c 'git \"$@\"' _ push -f origin main",
            "bash -c '\"$@\"' _ " + _F,
            'sh -c \'exec "$0" "$@"\' git push -f origin main',
            "{ bash; } <<< '" + _F + "'",
            "(bash) <<< '" + _F + "'",
            "echo '" + _F + "' | (cd .; bash)",
            "echo '" + _F + "' | { true; bash; }",
            "exec 3<<<'" + _F + "'; bash <&3",
            "exec 0<<<'" + _F + "'; bash",
            "while read -r l; do $l; done <<< '" + _F + "'",
            "busybox sh -c '" + _F + "'",
            "tcsh -c '" + _F + "'",
            "BASH_ENV=<(echo '" + _F + "') bash -c true",
            "PS4='$(" + _F + ")' bash -xc true",
            "trap '" + _F + "' EXIT",
            "echo $((1 + $(" + _F + " 2>&1 | wc -l)))",
            "echo ${X:-$(" + _F + ")}",
            "X='a[$(" + _F + ")]'; echo $((X))",
            "alias x='" + _F + "'; x",
            "shopt -s expand_aliases\nalias x='" + _F + "'\nx",
            "shopt -s expand_aliases; alias g=git\ng push -f origin main",
            "hash -p /usr/bin/git ls; ls push -f origin main",
            "printf 'all:\\n\\t" + _F + "\\n' | make -f -",
        )
    ),
    # git aliases and configuration
    *(
        ("git-config", c)
        for c in (
            "git config alias.p 'push -f origin main' && git p",
            "git config alias.p '!git push -f origin main'; git p",
            "git config --local alias.p 'push -f origin main'; git p",
            "git config --add alias.p 'push -f origin main' && git p",
            "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.p GIT_CONFIG_VALUE_0='push -f origin main' "
            "git p",
            "export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.p "
            "GIT_CONFIG_VALUE_0='push -f origin main'; git p",
            "env GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.p "
            "GIT_CONFIG_VALUE_0='push -f origin main'"
            " git p",
            "GIT_CONFIG_PARAMETERS=\"'alias.p=push -f origin main'\" git p",
            "git -c alias.p='push -f origin main' p",
            "git -c Alias.P='push -f origin main' p",
            "X='push -f origin main' git --config-env=alias.p=X p",
            "git -c alias.p='!git push -f origin main' p",
            "printf '[alias]\\n\\tp = push -f origin main\\n' > x.cfg && "
            "git -c include.path=$PWD/x.cfg p",
            "printf '[alias]\\n\\tp = push -f origin main\\n' "
            "> x.cfg && GIT_CONFIG_GLOBAL=x.cfg git p",
            "mkdir -p h && printf '#!/bin/sh\\ngit push -f origin main\\n' > h/pre-commit && "
            "chmod +x h/pre-commit && git -c core.hooksPath=h commit -q --allow-empty -m x",
            "git -c core.fsmonitor='git push -f origin main; echo' status",
            "GIT_EDITOR='git push -f origin main; true' git commit -q --allow-empty",
            "GIT_SEQUENCE_EDITOR='git push -f origin main; true' git rebase -q -i HEAD~1",
            "git -c remote.origin.push=refs/heads/exo/w1:refs/heads/main push origin",
            "git -c remote.origin.push=refs/heads/exo/w1:refs/heads/main push origin exo/w1",
            "git -c remote.origin.mirror=true push origin",
            "git config remote.origin.push refs/heads/exo/w1:refs/heads/main && git push",
            "git config remote.origin.push +HEAD:refs/heads/main; git push origin",
            "git config remote.origin.mirror true; git push origin",
            "git -c push.default=matching push origin",
            "git branch -u origin/main && git -c push.default=upstream push",
            "git config push.default upstream && git branch "
            "--set-upstream-to=origin/main && git push",
            "git remote add --mirror=push m ../../../origin.git && git push m",
            "git -c core.pager='git push -f origin main; cat' -p log -1",
            "git -c diff.external='sh -c \"git push -f origin main\"' diff HEAD~1",
            "git config core.hooksPath h && mkdir -p h && printf '#!/bin/sh\\n" + _F + "\\n' > "
            "h/pre-commit && chmod +x h/pre-commit && git commit -q --allow-empty -m x",
        )
    ),
    # abbreviated and negated long options
    *(
        ("abbreviations", c)
        for c in (
            "git push --mirr origin",
            "git push --al origin",
            "git push --force-w origin main",
            "git push --for origin main",
            "git push -n --no-dry-run -f origin main",
            "git push --force-with origin main",
            "git push --forc origin main",
            "git push --dry-run --no-dry-run -f origin main",
            "git push -n origin main --no-dry-run",
            "git push --del origin main",
            "git push --mi origin",
            "git push --rep=origin --force",
            "git push --set-up origin exo/w1:main",
            "git push --force-i -f origin main",
            "git push --no-verify --force origin main",
            "git push -fn --no-dry origin main",
            "git push --all --no-dry-run origin",
            "git push --mirror --no-dry origin",
            "git push --receive-pack='git receive-pack' origin exo/w1:main",
            "git push --exec=git-receive-pack origin exo/w1:main",
            "git push --pru origin 'refs/heads/exo/*:refs/heads/*'",
        )
    ),
    # programs that run programs
    *(
        ("runners", c)
        for c in (
            "git rebase -q -x '" + _F + "' HEAD~1",
            "git rebase -q --exec '" + _F + "' HEAD~1",
            "git rebase -q --exe='" + _F + "' HEAD~1",
            "git rebase -q -x'" + _F + "' HEAD~1",
            "git submodule foreach '" + _F + "'",
            "git bisect run sh -c '" + _F + "'",
            "script -qc '" + _F + "' /dev/null",
            "script -c '" + _F + "' /dev/null",
            "script --command '" + _F + "' /dev/null",
            "script --comm '" + _F + "' /dev/null",
            "strace -f -o /dev/null " + _F,
            "strace -qq " + _F,
            "timeout --sig KILL 5 " + _F,
            "timeout --kill 1 5 " + _F,
            "timeout --pre 5 " + _F,
            "timeout -k 1 5 " + _F,
            "timeout 5s " + _F,
            "nice --adj 5 " + _F,
            "nice -5 " + _F,
            "env -S '" + _F + "'",
            "env --split '" + _F + "'",
            "env -u X " + _F,
            "env --unse X " + _F,
            "env -- " + _F,
            "env --chdir=. " + _F,
            "env -C . " + _F,
            "env -vS'" + _F + "'",
            "echo main | xargs git push -f origin",
            "echo -f origin main | xargs git push",
            "echo push -f origin main | xargs git",
            "echo " + _F + " | xargs -I{} sh -c '{}'",
            "printf main | xargs -0 git push -f origin",
            "xargs -a <(echo main) git push -f origin",
            "echo main | xargs -n1 git push -f origin",
            "echo origin main | xargs git push --force-with-lease",
            "echo exo/w1:main | xargs " + "git push origin",
            "echo main | xargs --max-a 1 git push -f origin",
            "echo x | xargs -I% " + _F,
            "find . -maxdepth 0 -exec " + _F + " \\;",
            "find . -maxdepth 0 -execdir " + _F + " \\;",
            "find . -maxdepth 0 -exec sh -c '" + _F + "' \\;",
            "watch -n 1 -x " + _F,
            "watch -d " + _F,
            "parallel git push -f origin ::: main",
            "parallel ::: '" + _F + "'",
            "flock lk -c '" + _F + "'",
            "flock -n lk -c '" + _F + "'",
            "flock lk " + _F,
            "setsid -w " + _F,
            "setsid --wait " + _F,
            "stdbuf -o0 " + _F,
            "time " + _F,
            "nohup " + _F,
            "builtin eval '" + _F + "'",
            "command eval '" + _F + "'",
            "exec " + _F,
            "taskset -c 0 " + _F,
            "ionice -c3 " + _F,
            "uv run --bogus x " + _F,
            "npx -c '" + _F + "'",
        )
    ),
    # refspecs and HEAD
    *(
        ("refspecs", c)
        for c in (
            "git push origin heads/main",
            "git push -f origin heads/main",
            "git push origin refs/heads/main",
            "git push origin +main",
            "git push origin HEAD:refs/heads/main",
            "git push origin HEAD:heads/main",
            "git push origin :main",
            "git push origin :refs/heads/main",
            "git push origin :heads/main",
            "git push origin main:main",
            _P,
            "git push origin +exo/w1:main",
            "git push origin refs/heads/exo/w1:refs/heads/main",
            "git push origin @:main",
            "git push origin HEAD~0:main",
            "git push origin exo/w1~0:main",
            "git push origin 'refs/heads/*:refs/heads/*'",
            "git push origin heads/exo/w1:heads/main",
            "git push --delete origin heads/main",
            "git push -d origin refs/heads/main",
            "git push origin +HEAD:refs/heads/main",
            "git push --atomic origin exo/w1 exo/w1:main",
            "git push origin exo/w1 main",
            "git push ../../../origin.git HEAD:main",
            'git push origin "HEAD:main"',
            "git push origin $(echo main)",
            "git push origin `echo main`",
            "B=main; git push -f origin $B",
            "git push -f origin ${B:-main}",
            "git push $(echo -f) origin main",
            "git push origin exo/w1:refs/heads//main",
            'git push -f origin "${X:-ma}in"',
        )
    ),
    # the branch the push resolves HEAD to
    *(
        ("head", c)
        for c in (
            "git symbolic-ref HEAD refs/heads/main && git push origin HEAD",
            "git symbolic-ref HEAD refs/heads/main && git push",
            "git checkout -q --ignore-other-worktrees main && git push origin HEAD",
            "git branch -M main && git push origin HEAD",
            "GIT_DIR=../../.git git push origin HEAD",
            "export GIT_DIR=../../.git; git push",
            "set -a; GIT_DIR=../../.git; git push origin HEAD",
            "declare -x GIT_DIR=../../.git; git push origin HEAD",
            "cd ../.. && git push origin HEAD",
            "git -C ../.. push origin HEAD",
            "git clone -q ../../../origin.git c && cd c && git commit -q --allow-empty -m x && "
            "git push -q origin HEAD",
            "git clone -q ../../../origin.git c && git -C c commit -q --allow-empty -m x && "
            "git -C c push -q origin HEAD",
            "git worktree add -q -f ../w2 main && cd ../w2 && git push origin HEAD",
            "echo 'ref: refs/heads/main' > \"$(git rev-parse "
            '--git-dir)/HEAD" && git push origin HEAD',
            "git --git-dir=../../.git push origin HEAD",
        )
    ),
    # turning off git's gate (a worker's GIT_CONFIG_PARAMETERS names it) before a script
    *(
        ("gate-off", c)
        for c in (
            "unset GIT_CONFIG_PARAMETERS; echo 'git push -f origin main' > p.sh; sh p.sh",
            "env -u GIT_CONFIG_PARAMETERS sh -c 'git push -f origin main'",
            'env --unset=GIT_CONFIG_PARAMETERS bash -c "$(echo git push -f origin main)"',
            "export -n GIT_CONFIG_PARAMETERS; printf 'git push -f origin main' | bash",
            "declare +x GIT_CONFIG_PARAMETERS; echo 'git push -f origin main' > p.sh && . ./p.sh",
            "v=GIT_CONFIG_PARAMETERS; unset $v; echo 'git push -f origin main' > p.sh; sh p.sh",
            "env -uGIT_CONFIG_PARAMETERS -uGIT_CONFIG_COUNT sh -c 'git push -f origin main'",
            "echo 'git push -f origin main' > p.sh; exec env -u GIT_CONFIG_PARAMETERS sh p.sh",
            "builtin unset GIT_CONFIG_PARAMETERS; echo 'git push -f origin main' > p.sh; sh p.sh",
            "command unset GIT_CONFIG_PARAMETERS; echo 'git push -f origin main' > p.sh; sh p.sh",
            "echo 'git push -f origin main' > p.sh; timeout 9 env -u GIT_CONFIG_PARAMETERS sh p.sh",
        )
    ),
    *(("detach", c) for c in bypass_detach.DETACH),
]

#: Ordinary commands: classified as before, and what is allowed must not move ``main``.
ORDINARY: list[str] = [
    *bypass_detach.ORDINARY,
    "git push origin exo/w1",
    "git push",
    "git push origin HEAD",
    "git push -u origin exo/w1",
    "git push --force-with-lease origin exo/w1",
    'git commit -q -m "push -f" --allow-empty',
    'echo "git push -f origin main"',
    "ls | grep x",
    "cd sub 2>/dev/null; git status",
    "git status",
    "git log --oneline -1",
    "git -c user.name=x commit -q --allow-empty -m y",
    "git config --worktree user.email a@b",
    "git config --get user.name",
    "GIT_EDITOR=true git status",
    "timeout 30 git push origin exo/w1",
    "env FOO=1 git push origin exo/w1",
    "git add -A && git commit -q -m wip --allow-empty && git push",
    "bash -c 'git push origin exo/w1'",
    "x=$(git rev-parse HEAD); echo $x",
    "git push origin heads/exo/w1",
    "git push origin refs/heads/exo/w1",
    "git push origin HEAD:refs/heads/exo/w1",
    "git push -n -f origin main",
    "unset TMPDIR; git push origin exo/w1",
    "env -u HOME git push origin exo/w1",
]
