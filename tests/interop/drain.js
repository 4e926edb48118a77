#!/usr/bin/env node
// Claude Code's inbox poller, made fast for tests.
//
//   node drain.js <inbox> <mode> <intervalMs> <out.jsonl> <stopFile> [--wait]
//
// Every intervalMs (Claude Code: 1000) it takes the inbox lock with Claude Code's
// settings, reads the file, records each undelivered entry as one JSON line
// {"entry": <entry>} in out.jsonl, marks them delivered and writes the file back:
//   mode "flag"  (2.1.112): set read: true, keep the entry, write in place;
//   mode "prune" (2.1.330): delete delivered entries, matched by from|timestamp|text,
//                           write <file>.tmp.<8 hex> and rename.
// A poll that cannot get the lock is skipped (counted), as Claude Code retries on its
// next poll. It exits after the first poll that starts once stopFile exists, printing
// {"polls", "drained", "lock_failures", "corrupt_reads"}.
'use strict';

const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
const lockfile = require('proper-lockfile');

const CLAUDE_LOCK = {
    retries: { retries: 10, minTimeout: 5, maxTimeout: 100, factor: 2, randomize: false },
    stale: 10000,
    update: 5000,
};

const argv = process.argv.slice(2);
const wait = argv.includes('--wait');
const [inboxArg, mode, intervalArg, outFile, stopFile] = argv.filter((a) => a !== '--wait');
if (!stopFile || (mode !== 'flag' && mode !== 'prune')) {
    process.stderr.write('usage: drain.js <inbox> flag|prune <intervalMs> <out.jsonl> <stopFile>\n');
    process.exit(2);
}
const inbox = path.resolve(inboxArg);
const interval = Number(intervalArg);
const stats = { polls: 0, drained: 0, lock_failures: 0, corrupt_reads: 0 };

const key = (e) => `${e.from}|${e.timestamp}|${e.text}`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function readEntries() {
    let raw;
    try {
        raw = fs.readFileSync(inbox, 'utf8');
    } catch (err) {
        if (err.code === 'ENOENT') return null;
        throw err;
    }
    try {
        const value = JSON.parse(raw);
        if (Array.isArray(value)) return value;
    } catch (_err) { /* fall through */ }
    stats.corrupt_reads += 1;
    return [];
}

function writeEntries(entries) {
    const data = JSON.stringify(entries, null, 2);
    if (mode === 'flag') {
        fs.writeFileSync(inbox, data);
        return;
    }
    const tmp = `${inbox}.tmp.${crypto.randomBytes(4).toString('hex')}`;
    fs.writeFileSync(tmp, data, { flag: 'wx' });
    fs.renameSync(tmp, inbox);
}

async function poll() {
    stats.polls += 1;
    if (!fs.existsSync(inbox)) return;
    let release;
    try {
        release = await lockfile.lock(inbox, { ...CLAUDE_LOCK, onCompromised: () => {} });
    } catch (err) {
        if (err.code !== 'ELOCKED') throw err;
        stats.lock_failures += 1;
        return;
    }
    try {
        const entries = readEntries();
        if (entries === null) return;
        const fresh = entries.filter((e) => e && typeof e === 'object' && e.read !== true);
        if (fresh.length === 0) return;
        fs.appendFileSync(outFile, fresh.map((e) => `${JSON.stringify({ entry: e })}\n`).join(''));
        stats.drained += fresh.length;
        if (mode === 'flag') {
            for (const e of fresh) e.read = true;
            writeEntries(entries);
        } else {
            const delivered = new Set(fresh.map(key));
            writeEntries(entries.filter((e) => !delivered.has(key(e))));
        }
    } finally {
        await release();
    }
}

async function main() {
    if (wait) {
        process.stdout.write('ready\n');
        await new Promise((r) => process.stdin.once('data', () => { process.stdin.destroy(); r(); }));
    }
    for (;;) {
        const stopping = fs.existsSync(stopFile);
        await poll();
        if (stopping) break;
        await sleep(interval);
    }
    process.stdout.write(`${JSON.stringify(stats)}\n`);
}

main().catch((err) => {
    process.stderr.write(`drain.js: ${err.stack || err}\n`);
    process.exit(1);
});
