// `emi backup DIR` while the paywall runs on the state folder: a sale made just before is in the backup, so that the
// buyer who resends the same PAYMENT-SIGNATURE to the restored machine gets the file again, never a second charge.
// A plain `cp` of the .sqlite files at the same moment misses the sale (it sits in the -wal file): the same check
// fails on such a copy, which proves it can. Real programs on loopback: the compiled `emi generate`, `emi paywall`,
// `emi buy` and `emi backup`, the development facilitator and its ledger in this process.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import {
  copyFile,
  lstat,
  mkdir,
  open,
  readFile,
  readdir,
  readlink,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import algosdk from 'algosdk';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import type { DevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import { BUY_EXIT_CODES } from '../paywall-worker/buy-command.ts';
import { resourceById } from './paywall-harness.ts';
import { errorLines, expectOk, expectUsageMistake, runEmi, startEmi } from './ops-cli.ts';
import type { Finished, Running } from './ops-cli.ts';
import { tempDir } from './helpers/temp-dir.ts';
import { tmpfsMounter } from './helpers/tmpfs.ts';

const resource = resourceById('paidMarketRegime');
// Mounted at the file's level, so that its afterAll unmounts even when a filter skips the tests that mount.
const tmpfs = tmpfsMounter();

let work: string;
let chain: DevFacilitator;
let payTo: string;
/** Between `emi buy` and the paywall: keeps the PAYMENT-SIGNATURE the buyer sent. */
const proxy = { url: '', target: '', signatures: [] as string[], server: null as Server | null };
/** The signed payment of the one sale, and what the payee held after it. */
let signature = '';
let paidBalance = 0n;
let backupRun: Finished;

const paywallEnv = (): Record<string, string> => ({
  EMI_PAYTO: payTo,
  EMI_FACILITATOR_URL: chain.url,
  EMI_INDEXER_URL: chain.url,
  EMI_ALLOW_SIMULATED: '1',
});

/** `emi paywall` on a free port over the state folder `state` and the paid bodies `paid`; resolves once listening. */
async function startPaywall(
  cwd: string,
  state: string,
  paid: string,
): Promise<{ run: Running; url: string }> {
  const run = startEmi(cwd, ['paywall', '--port', '0', '--paid', paid, '--state', state], paywallEnv());
  await run.waitFor(/x402 paywall listening on http:\/\/\S+/);
  return { run, url: /x402 paywall listening on (http:\/\/\S+)/.exec(run.output())![1]! };
}

async function stopPaywall(paywall: { run: Running }): Promise<void> {
  paywall.run.stop();
  await paywall.run.done;
}

async function forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const sent = req.headers['payment-signature'];
  if (typeof sent === 'string') proxy.signatures.push(sent);
  const headers = Object.fromEntries(
    Object.entries(req.headers).filter(([name]) => !['host', 'connection'].includes(name)),
  ) as Record<string, string>;
  const answer = await fetch(`${proxy.target}${req.url ?? '/'}`, { headers });
  const kept = [...answer.headers].filter(
    ([name]) => !['content-length', 'transfer-encoding', 'connection', 'keep-alive'].includes(name),
  );
  res.writeHead(answer.status, Object.fromEntries(kept));
  res.end(Buffer.from(await answer.arrayBuffer()));
}

/**
 * Restores `stateCopy` as a state folder at a new path (a fresh folder: `cp -a COPY NEW/var`, as BACKUP.txt says),
 * starts the paywall there and resends the kept PAYMENT-SIGNATURE: its answer, and what the payee holds after it.
 */
async function resendAfterRestore(
  stateCopy: string,
  name: string,
): Promise<{ status: number; body: string; payee: bigint }> {
  const moved = join(work, name, 'elsewhere');
  await mkdir(moved, { recursive: true });
  execFileSync('cp', ['-a', stateCopy, join(moved, 'var')]);
  // The paid bodies the restored state serves: its own generation's, through its `current` (as the link paid/ is).
  const paywall = await startPaywall(
    moved,
    join(moved, 'var'),
    join(moved, 'var', 'published', 'current', 'paid'),
  );
  try {
    const answer = await fetch(`${paywall.url}${resource.path}`, {
      headers: { 'PAYMENT-SIGNATURE': signature },
    });
    return { status: answer.status, body: await answer.text(), payee: chain.ledger.assetBalance(payTo) };
  } finally {
    await stopPaywall(paywall);
  }
}

/** What SQLite's integrity check says of a file, opened read-only. */
function integrity(file: string): string {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return (db.pragma('integrity_check', { simple: true }) as string) ?? '';
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  work = await tempDir('emi-backup-', 'file');
  chain = await startDevFacilitator({ port: 0 });
  payTo = algosdk.generateAccount().addr.toString();
  chain.ledger.optIn(payTo);
  // A state folder as a run leaves it: the arena store, the run records, the published generation.
  expectOk(await runEmi(work, ['generate', '--out', 'site', '--paid', 'paid', '--state', 'var']));
  const paywall = await startPaywall(work, 'var', 'paid');
  proxy.target = paywall.url;
  proxy.server = createServer((req, res) => {
    forward(req, res).catch(() => req.socket.destroy());
  });
  await new Promise<void>((resolve) => proxy.server!.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(proxy.server.address() as AddressInfo).port}`;
  try {
    const sale = await runEmi(work, [
      'buy',
      resource.path,
      '--base-url',
      proxy.url,
      '--facilitator-url',
      chain.url,
    ]);
    expect(sale.code, sale.stderr).toBe(BUY_EXIT_CODES.paid);
    expect(new Set(proxy.signatures).size).toBe(1);
    signature = proxy.signatures[0]!;
    paidBalance = chain.ledger.assetBalance(payTo);
    expect(paidBalance).toBeGreaterThan(0n);
    // At the same moment, with the paywall still running: a plain copy of the .sqlite files, and emi backup.
    await mkdir(join(work, 'plain'));
    for (const name of (await readdir(join(work, 'var'))).filter((n) => n.endsWith('.sqlite'))) {
      await copyFile(join(work, 'var', name), join(work, 'plain', name));
    }
    execFileSync('cp', ['-a', join(work, 'var', 'published'), join(work, 'plain', 'published')]);
    await writeFile(join(work, 'emi.config.json'), '{}\n');
    backupRun = await runEmi(work, ['backup', 'bk', '--config', 'emi.config.json'], { EMI_STATE_DIR: 'var' });
  } finally {
    proxy.server.closeAllConnections();
    await new Promise((resolve) => proxy.server?.close(resolve));
    await stopPaywall(paywall);
  }
}, 120_000);

afterAll(async () => {
  await chain?.close();
});

describe('emi backup while the paywall runs', () => {
  it('copies every store, says each with its size, and names the folder last', async () => {
    expectOk(backupRun);
    const stores = (await readdir(join(work, 'var'))).filter((name) => name.endsWith('.sqlite')).sort();
    expect(stores).toEqual(expect.arrayContaining(['arena.sqlite', 'payments.sqlite']));
    const lines = backupRun.stdout.trim().split('\n');
    expect(lines.slice(0, -1)).toEqual(
      stores.map((name) => expect.stringMatching(new RegExp(`^${name} \\d`))),
    );
    expect(lines.at(-1)).toBe(`backed up ${join(work, 'var')} into ${join(work, 'bk')}`);
    expect(errorLines(backupRun)).toEqual([]);
    expect(await readdir(join(work, 'bk', 'state'))).toEqual(
      expect.arrayContaining([...stores, 'last-run.json', 'run-history.json', 'published']),
    );
    // Nothing left under a temporary name beside it.
    expect((await readdir(work)).filter((name) => name.startsWith('bk.tmp-'))).toEqual([]);
  });

  it('leaves each copy one sound file, private, in a private folder', async () => {
    const copies = join(work, 'bk', 'state');
    const stores = (await readdir(copies)).filter((name) => name.endsWith('.sqlite'));
    expect(stores.length).toBeGreaterThanOrEqual(2);
    expect((await stat(join(work, 'bk'))).mode & 0o777).toBe(0o700);
    for (const name of stores) {
      const file = join(copies, name);
      expect((await stat(file)).mode & 0o777, name).toBe(0o600);
      expect(integrity(file), name).toBe('ok');
      expect(existsSync(`${file}-wal`) || existsSync(`${file}-shm`), name).toBe(false);
    }
  });

  it('copies the served generation as a real folder, the configuration, and says how to restore', async () => {
    const served = await readlink(join(work, 'var', 'published', 'current'));
    const published = join(work, 'bk', 'state', 'published');
    expect(await readlink(join(published, 'current'))).toBe(served);
    expect((await stat(join(published, served))).isDirectory()).toBe(true);
    expect(await readFile(join(published, served, 'paid', resource.file), 'utf8')).toBe(
      await readFile(join(work, 'paid', resource.file), 'utf8'),
    );
    expect(await readFile(join(work, 'bk', 'emi.config.json'), 'utf8')).toBe('{}\n');
    const notes = await readFile(join(work, 'bk', 'BACKUP.txt'), 'utf8');
    expect(notes).toContain(`state folder: ${join(work, 'var')}`);
    expect(notes).toContain(`cp -a ${join(work, 'bk')}/state ${join(work, 'var')}`);
    // Neither lock nor claim files: a restored machine must not believe a run or a scheduler holds it.
    const copied = await readdir(join(work, 'bk', 'state'));
    expect(
      copied.filter((name) => /\.lock$|instance\.json$|\.takeover$|^scheduler\.json$/.test(name)),
    ).toEqual([]);
  });

  it('restored at another path, redelivers the sale to the same PAYMENT-SIGNATURE without charging again', async () => {
    const resent = await resendAfterRestore(join(work, 'bk', 'state'), 'from-backup');
    expect(resent.status, resent.body).toBe(200);
    expect(resource.schema.safeParse(JSON.parse(resent.body)).success, resent.body).toBe(true);
    expect(resent.payee).toBe(paidBalance);
  }, 60_000);

  it('a plain cp of the .sqlite files at the same moment loses the sale (what the check above would catch)', async () => {
    const resent = await resendAfterRestore(join(work, 'plain'), 'from-plain-cp');
    expect(resent.status, resent.body).not.toBe(200);
    expect(resent.payee).toBe(paidBalance);
  }, 60_000);

  it('refuses a folder that holds anything: exit 2, one line, nothing written', async () => {
    const taken = join(work, 'taken');
    await mkdir(taken);
    await writeFile(join(taken, 'notes.txt'), 'mine\n');
    const before = await readdir(work);
    const run = await runEmi(work, ['backup', 'taken', '--state', 'var']);
    expectUsageMistake(run, /^emi: refusing to back up: .*taken is not empty/);
    expect(run.stdout).toBe('');
    expect(await readdir(taken)).toEqual(['notes.txt']);
    expect(await readdir(work)).toEqual(before);
  });

  it('backs up the other stores when one is damaged: names it and the repair, says so in BACKUP.txt, exit 1', async () => {
    const state = join(work, 'damaged-state');
    await mkdir(state);
    await copyFile(join(work, 'bk', 'state', 'payments.sqlite'), join(state, 'payments.sqlite'));
    await damage(join(work, 'bk', 'state', 'arena.sqlite'), join(state, 'arena.sqlite'));
    await writeFile(join(state, 'publishers.sqlite'), Buffer.alloc(8192, 7)); // not a database at all
    const run = await runEmi(work, ['backup', 'bk-damaged', '--state', state]);
    expect(run.code, run.stderr).toBe(1);
    expect(errorLines(run)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^emi: ${join(state, 'arena.sqlite')} is damaged \\(.*\\), not backed up: run \`emi arena repair\``,
        ),
      ),
      expect.stringMatching(new RegExp(`^emi: ${join(state, 'publishers.sqlite')} is damaged \\(`)),
    ]);
    expect(run.stdout).toMatch(/^payments\.sqlite \d/m);
    const copies = join(work, 'bk-damaged', 'state');
    expect(await readdir(copies)).toEqual(['payments.sqlite']);
    expect(integrity(join(copies, 'payments.sqlite'))).toBe('ok');
    const notes = await readFile(join(work, 'bk-damaged', 'BACKUP.txt'), 'utf8');
    expect(notes).toMatch(/NOT BACKED UP: arena\.sqlite is damaged .*emi arena repair/);
    expect(notes).toMatch(/NOT BACKED UP: publishers\.sqlite is damaged/);
  });
});

/** A copy of the store `from` at `to` with pages past its first overwritten: it opens, but its tables are malformed. */
async function damage(from: string, to: string): Promise<void> {
  await copyFile(from, to);
  const handle = await open(to, 'r+');
  try {
    const { size } = await handle.stat();
    for (let at = 4096 * 2; at < size; at += 4096 * 3)
      await handle.write(Buffer.alloc(600, 0x5a), 0, 600, at);
  } finally {
    await handle.close();
  }
}

/** The pid of a process that has ended (a stale temporary's owner). */
const deadPid = (): number => spawnSync(process.execPath, ['-e', '']).pid!;

/** The backup temporaries (`NAME.tmp-…`) in `folder`. */
const temporariesIn = async (folder: string, name: string): Promise<string[]> =>
  (await readdir(folder)).filter((entry) => entry.startsWith(`${name}.tmp-`));

describe('emi backup of a state folder holding other things named *.sqlite', () => {
  it('copies the regular files alone: a folder or a link so named is no store', async () => {
    const state = join(work, 'odd-state');
    await mkdir(join(state, 'x.sqlite'), { recursive: true });
    await copyFile(join(work, 'bk', 'state', 'payments.sqlite'), join(state, 'payments.sqlite'));
    await symlink(join(work, 'var', 'arena.sqlite'), join(state, 'linked.sqlite'));
    const run = await runEmi(work, ['backup', 'bk-odd', '--state', state]);
    expectOk(run);
    expect(run.stdout).toMatch(/^payments\.sqlite \d.*\nbacked up /);
    expect(await readdir(join(work, 'bk-odd', 'state'))).toEqual(['payments.sqlite']);
  });
});

describe('emi backup refuses a folder a run, a build or a restore would remove or publish', () => {
  const places = [
    ['the state folder', 'var'],
    ['inside the state folder', 'var/bk2'],
    ['a store name inside the state folder', 'var/x.sqlite'],
    ['inside the served generation through site/api', 'site/api/bk4'],
    ['inside the paid link', 'paid/bk'],
    ['inside the published folder', 'site/bk'],
    ['inside the build output', 'dist/bk5'],
    ['inside the build generations', '.dist.generations/bk'],
  ] as const;
  it.each(places)('%s (%s): exit 2, one line, nothing written', async (_what, dir) => {
    const before = await readdir(join(work, 'var'));
    const site = await readdir(join(work, 'site'));
    const run = await runEmi(work, ['backup', dir, '--state', 'var']);
    expectUsageMistake(
      run,
      /^emi: refusing to back up: .* (is|is inside) (the|a) .*: a run or a restore would/,
    );
    expect(run.stdout).toBe('');
    expect(await readdir(join(work, 'var'))).toEqual(before);
    expect(await readdir(join(work, 'site'))).toEqual(site);
    if (dir !== 'var') expect(existsSync(join(work, dir))).toBe(false);
  });

  it('through a link to the state folder as well', async () => {
    await symlink(join(work, 'var'), join(work, 'var-link'));
    const run = await runEmi(work, ['backup', 'var-link/bk', '--state', 'var']);
    expectUsageMistake(run, /^emi: refusing to back up: var-link\/bk \(.*\) is inside the state folder/);
  });
});

describe('emi backup into a link, a mount point, a full disk', () => {
  it('into a link to an empty folder: the backup lands in that folder, the link stays', async () => {
    await mkdir(join(work, 'linked-target'));
    await symlink(join(work, 'linked-target'), join(work, 'bk-link'));
    const run = await runEmi(work, ['backup', 'bk-link', '--state', 'var']);
    expectOk(run);
    expect((await lstat(join(work, 'bk-link'))).isSymbolicLink()).toBe(true);
    expect((await readdir(join(work, 'linked-target'))).sort()).toEqual(['BACKUP.txt', 'state']);
    expect((await readdir(join(work, 'linked-target'))).filter((name) => name.includes('.tmp-'))).toEqual([]);
    expect(integrity(join(work, 'linked-target', 'state', 'arena.sqlite'))).toBe('ok');
    expect((await stat(join(work, 'linked-target'))).mode & 0o777).toBe(0o700);
  });

  it.runIf(tmpfs.allowed)('into an empty mount point: written on that file system, inside it', async () => {
    const mountPoint = join(work, 'mnt');
    await mkdir(mountPoint);
    expect(tmpfs.mount(mountPoint, '16m')).toBe(true);
    const run = await runEmi(work, ['backup', 'mnt', '--state', 'var']);
    expectOk(run);
    expect((await readdir(mountPoint)).sort()).toEqual(['BACKUP.txt', 'state']);
    expect(integrity(join(mountPoint, 'state', 'arena.sqlite'))).toBe('ok');
    expect(await temporariesIn(work, 'mnt')).toEqual([]);
  });

  it.runIf(tmpfs.allowed)(
    'on a full disk: names the backup copy, not the live store; exit 1, nothing left',
    async () => {
      const small = join(work, 'small');
      await mkdir(small);
      expect(tmpfs.mount(small, '64k')).toBe(true);
      const run = await runEmi(work, ['backup', 'small/bk', '--state', 'var']);
      expect(run.code, run.stderr).toBe(1);
      expect(errorLines(run)).toEqual([
        expect.stringMatching(
          new RegExp(
            `^emi: ${join(small, 'bk')}\\.tmp-\\d+-[0-9a-f]+/state/\\S+\\.sqlite: database or disk is full$`,
          ),
        ),
      ]);
      expect(await readdir(small)).toEqual([]);
    },
  );
});

describe('emi backup cleans up after itself', () => {
  it('removes its temporary on SIGTERM and ends by the signal', async () => {
    // Stores big enough that copying and checking them takes a good while: stopped while under way.
    const state = join(work, 'big-state');
    await mkdir(state);
    for (const name of ['a.sqlite', 'b.sqlite', 'c.sqlite']) {
      const db = new Database(join(state, name));
      db.exec(
        'CREATE TABLE t (pad BLOB); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 8000) ' +
          'INSERT INTO t SELECT randomblob(4000) FROM n',
      );
      db.close();
    }
    const run = startEmi(work, ['backup', 'bk-stopped', '--state', state], {}, { timeoutMs: 60_000 });
    let finished = false;
    void run.done.then(() => (finished = true));
    while (!finished && (await temporariesIn(work, 'bk-stopped')).length === 0) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    run.stop();
    const done = await run.done;
    expect(done.signal ?? done.code, done.stderr).toBe('SIGTERM');
    expect(await temporariesIn(work, 'bk-stopped')).toEqual([]);
    expect(existsSync(join(work, 'bk-stopped'))).toBe(false);
  }, 90_000);

  it('removes stale temporaries of the same folder, beside it and inside it, before starting', async () => {
    const pid = deadPid();
    const beside = join(work, `bk-stale.tmp-${pid}-0badc0de`);
    await mkdir(join(beside, 'state'), { recursive: true });
    await writeFile(join(beside, 'state', 'payments.sqlite'), 'private');
    await mkdir(join(work, 'bk-stale', `.tmp-${pid}-0badf00d`, 'state'), { recursive: true });
    // Another backup's, still running (this test's own process): kept.
    const live = join(work, `bk-stale.tmp-${process.pid}-00c0ffee`);
    await mkdir(live);
    const run = await runEmi(work, ['backup', 'bk-stale', '--state', 'var']);
    expectOk(run);
    expect(existsSync(beside)).toBe(false);
    expect((await readdir(join(work, 'bk-stale'))).sort()).toEqual(['BACKUP.txt', 'state']);
    expect(existsSync(live)).toBe(true);
  });
});

describe('emi backup of a store written several times a second', () => {
  it('ends, with every row committed before it began', async () => {
    const state = join(work, 'busy-state');
    await mkdir(state);
    const store = join(state, 'busy.sqlite');
    const db = new Database(store);
    db.pragma('journal_mode = WAL');
    // About 50 MB: a copy in steps takes longer than the 20 ms between two writes, so it would start over forever.
    db.exec(
      'CREATE TABLE t (id INTEGER PRIMARY KEY, pad BLOB); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL ' +
        'SELECT i + 1 FROM n WHERE i < 12000) INSERT INTO t (pad) SELECT randomblob(2048) FROM n',
    );
    db.close();
    // Another process inserts a row every 20 ms for as long as the backup runs (a busy paywall, a run's writes).
    const writer = spawn(
      process.execPath,
      [
        '-e',
        `const Database = require(${JSON.stringify(resolve('node_modules/better-sqlite3'))});
         const db = new Database(${JSON.stringify(store)});
         db.pragma('journal_mode = WAL');
         const insert = db.prepare('INSERT INTO t (pad) VALUES (?)');
         setInterval(() => { insert.run(Buffer.alloc(2048, 1)); process.stdout.write('w\\n'); }, 20);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      await new Promise<void>((resolve) => writer.stdout.once('data', () => resolve()));
      const reader = new Database(store, { readonly: true });
      const committed = (reader.prepare('SELECT max(id) AS id FROM t').get() as { id: number }).id;
      reader.close();
      const run = await startEmi(work, ['backup', 'bk-busy', '--state', state], {}, { timeoutMs: 60_000 })
        .done;
      expectOk(run);
      const copy = new Database(join(work, 'bk-busy', 'state', 'busy.sqlite'), { readonly: true });
      try {
        const row = copy.prepare('SELECT count(*) AS n FROM t WHERE id <= ?').get(committed) as { n: number };
        expect(row.n).toBe(committed);
        expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
      } finally {
        copy.close();
      }
    } finally {
      writer.kill();
    }
  }, 90_000);
});
