#!/usr/bin/env node
// A Node inbox writer that behaves like Claude Code's SendMessage write.
//
//   node writer.js <inbox> <sender> <count> <style> [delayMs] [options]
//
// style: "2.1.112" (writeFileSync in place; entries {from, text, timestamp})
//        "2.1.330" (write <file>.tmp.<8 hex>, rename; entries add msgV, msg_id, type)
//
// Per message, like Claude Code: mkdir -p the inboxes dir, create the file as "[]" with
// flag "wx" if absent, take proper-lockfile's lock with Claude Code's settings (retries
// 10, 5..100 ms, factor 2, no jitter, stale 10 s, update 5 s), re-read, append, write,
// release. When the retries run out (ELOCKED) Claude Code logs and DROPS the message; we
// do the same but count it in `lock_failures` (and list the index in `failed`).
//
// Options:
//   --wait              print "ready" on stdout, then wait for a line on stdin to start
//   --durable           fsync the written file (and the dir after a rename); Claude Code
//                       itself never fsyncs, this exists to compare equal work
//   --prefix P          message text is "<P>#<i>" (default: the sender)
//   --offset-ms D       wait D ms after starting (after "go") before the first message,
//                       so paced writers started together do not all collide at once
//   --prefill-from F    benchmark mode: before each timed append (every --reset-every
//   --reset-every K     appends), copy F's bytes over the inbox (untimed), so the inbox
//                       size stays about constant
//   --warmup W          W untimed appends first (benchmark mode)
//   --stop-file F       stop before the next message once F exists (count is then an
//                       upper bound), so a paced writer can run beside other work
//
// Prints one JSON line at the end:
//   {written, lock_failures, failed, corrupt_reads, compromised, latencies_ms,
//    lock_waits_ms}
// latencies_ms times each whole write: mkdir -p, create, lock, read, append, write, unlock;
// lock_waits_ms the lock alone (from asking to holding, retries included), each message.
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

function parseArgs(argv) {
    const pos = [];
    const opt = { wait: false, durable: false, prefix: null, prefillFrom: null, resetEvery: 0,
        warmup: 0, offsetMs: 0, stopFile: null };
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i];
        if (a === '--wait') opt.wait = true;
        else if (a === '--durable') opt.durable = true;
        else if (a === '--prefix') opt.prefix = argv[++i];
        else if (a === '--prefill-from') opt.prefillFrom = argv[++i];
        else if (a === '--reset-every') opt.resetEvery = Number(argv[++i]);
        else if (a === '--warmup') opt.warmup = Number(argv[++i]);
        else if (a === '--offset-ms') opt.offsetMs = Number(argv[++i]);
        else if (a === '--stop-file') opt.stopFile = argv[++i];
        else if (a.startsWith('--')) throw new Error(`unknown option ${a}`);
        else pos.push(a);
    }
    if (pos.length < 4) {
        throw new Error('usage: writer.js <inbox> <sender> <count> <style> [delayMs] [options]');
    }
    const [inbox, sender, count, style, delay] = pos;
    if (style !== '2.1.112' && style !== '2.1.330') throw new Error(`unknown style ${style}`);
    return { inbox: path.resolve(inbox), sender, count: Number(count), style,
        delayMs: Number(delay || 0), ...opt, prefix: opt.prefix ?? sender };
}

const stats = { written: 0, lock_failures: 0, failed: [], corrupt_reads: 0, compromised: 0,
    latencies_ms: [], lock_waits_ms: [] };

function fsyncDir(dir) {
    const fd = fs.openSync(dir, 'r');
    try { fs.fsyncSync(fd); } finally { fs.closeSync(fd); }
}

function ensureFile(file) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    try {
        fs.writeFileSync(file, '[]', { flag: 'wx' });
    } catch (err) {
        if (err.code !== 'EEXIST') throw err;
    }
}

function readEntries(file) {
    // Claude Code treats a top level that is not an array as empty (and overwrites it);
    // we do the same but count it, so tests can assert nobody ever produced one.
    let raw;
    try {
        raw = fs.readFileSync(file, 'utf8');
    } catch (err) {
        if (err.code === 'ENOENT') return [];
        throw err;
    }
    // An empty file is another writer's ensureFile between its create and its write of
    // '[]' (no lock is held there, as in Claude Code): not a corrupt write by anyone.
    if (raw.length === 0) return [];
    try {
        const value = JSON.parse(raw);
        if (Array.isArray(value)) return value;
    } catch (_err) { /* fall through */ }
    stats.corrupt_reads += 1;
    return [];
}

function writeEntries(file, entries, style, durable) {
    const data = JSON.stringify(entries, null, 2);
    if (style === '2.1.112') {
        if (!durable) {
            fs.writeFileSync(file, data);
            return;
        }
        const fd = fs.openSync(file, 'w');
        try { fs.writeSync(fd, data); fs.fsyncSync(fd); } finally { fs.closeSync(fd); }
        return;
    }
    const tmp = `${file}.tmp.${crypto.randomBytes(4).toString('hex')}`;
    const fd = fs.openSync(tmp, 'wx');
    try {
        fs.writeSync(fd, data);
        if (durable) fs.fsyncSync(fd);
    } finally {
        fs.closeSync(fd);
    }
    fs.renameSync(tmp, file);
    if (durable) fsyncDir(path.dirname(file));
}

function makeEntry(args, i) {
    const entry = { from: args.sender, text: `${args.prefix}#${i}`,
        timestamp: new Date().toISOString() };
    if (args.style === '2.1.330') {
        entry.msgV = 1;
        entry.msg_id = crypto.randomUUID();
        entry.type = 'message';
    }
    return entry;
}

async function writeOne(args, i, timed) {
    const t0 = process.hrtime.bigint();
    ensureFile(args.inbox);
    let release;
    const asked = process.hrtime.bigint();
    try {
        release = await lockfile.lock(args.inbox, {
            ...CLAUDE_LOCK,
            onCompromised: () => { stats.compromised += 1; },
        });
        if (timed) stats.lock_waits_ms.push(Number(process.hrtime.bigint() - asked) / 1e6);
    } catch (err) {
        if (err.code !== 'ELOCKED') throw err;
        if (timed) stats.lock_waits_ms.push(Number(process.hrtime.bigint() - asked) / 1e6);
        // Claude Code would log and drop this message.
        stats.lock_failures += 1;
        stats.failed.push(i);
        return;
    }
    try {
        const entries = readEntries(args.inbox);
        entries.push(makeEntry(args, i));
        writeEntries(args.inbox, entries, args.style, args.durable);
    } finally {
        await release();
    }
    if (timed) {
        stats.written += 1;
        stats.latencies_ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
}

function waitForGo() {
    return new Promise((resolve) => {
        process.stdout.write('ready\n');
        process.stdin.once('data', () => { process.stdin.destroy(); resolve(); });
    });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
    const args = parseArgs(process.argv.slice(2));
    const snapshot = args.prefillFrom ? fs.readFileSync(args.prefillFrom) : null;
    const reset = (n) => {
        if (snapshot && args.resetEvery > 0 && n % args.resetEvery === 0) {
            fs.writeFileSync(args.inbox, snapshot);
        }
    };
    if (args.wait) await waitForGo();
    if (args.offsetMs > 0) await sleep(args.offsetMs);
    for (let w = 0; w < args.warmup; w++) {
        reset(w);
        await writeOne(args, `warmup-${w}`, false);
    }
    for (let i = 0; i < args.count; i++) {
        if (args.stopFile && fs.existsSync(args.stopFile)) break;
        reset(i);
        await writeOne(args, i, true);
        if (args.delayMs > 0) await sleep(args.delayMs);
    }
    process.stdout.write(`${JSON.stringify(stats)}\n`);
}

main().catch((err) => {
    process.stderr.write(`writer.js: ${err.stack || err}\n`);
    process.exit(1);
});
