#!/usr/bin/env node
// Take proper-lockfile's lock on <file> (Claude Code's settings), hold it, release it.
//
//   node hold_lock.js <file> <holdMs>
//
// Prints "locked" once the lock is held, then after holdMs checks that the lock dir is
// still there with the mtime proper-lockfile gave it (nobody removed or touched a fresh
// lock), releases, and prints {"acquire_ms", "held_ms", "intact", "compromised"}.
'use strict';

const fs = require('fs');
const path = require('path');
const lockfile = require('proper-lockfile');

async function main() {
    const [fileArg, holdArg] = process.argv.slice(2);
    if (!holdArg) {
        process.stderr.write('usage: hold_lock.js <file> <holdMs>\n');
        process.exit(2);
    }
    const file = path.resolve(fileArg);
    const lockDir = `${file}.lock`;
    let compromised = false;
    const t0 = Date.now();
    const release = await lockfile.lock(file, {
        retries: { retries: 10, minTimeout: 5, maxTimeout: 100, factor: 2, randomize: false },
        stale: 10000,
        update: 5000,
        realpath: false,
        onCompromised: () => { compromised = true; },
    });
    const acquired = Date.now();
    const mtime = fs.statSync(lockDir).mtimeMs;
    process.stdout.write('locked\n');
    await new Promise((r) => setTimeout(r, Number(holdArg)));
    let intact = false;
    try {
        intact = fs.statSync(lockDir).mtimeMs === mtime;
    } catch (_err) { /* removed under us */ }
    const held = Date.now() - acquired;
    if (!compromised) await release();
    process.stdout.write(`${JSON.stringify({ acquire_ms: acquired - t0, held_ms: held, intact,
        compromised })}\n`);
}

main().catch((err) => {
    process.stderr.write(`hold_lock.js: ${err.stack || err}\n`);
    process.exit(1);
});
