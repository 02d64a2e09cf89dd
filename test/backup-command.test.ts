// `emi backup DIR` while the paywall runs on the state folder: a sale made just before is in the backup, so that the
// buyer who resends the same PAYMENT-SIGNATURE to the restored machine gets the file again, never a second charge.
// A plain `cp` of the .sqlite files at the same moment misses the sale (it sits in the -wal file): the same check
// fails on such a copy, which proves it can. Real programs on loopback: the compiled `emi generate`, `emi paywall`,
// `emi buy` and `emi backup`, the development facilitator and its ledger in this process.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readFile, readdir, readlink, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
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

const resource = resourceById('paidMarketRegime');

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

  it('fails on a store it cannot copy: exit 1, one line naming the file, no folder left', async () => {
    const state = join(work, 'damaged-state');
    await mkdir(state);
    await writeFile(join(state, 'payments.sqlite'), Buffer.alloc(8192, 7)); // not a database
    const before = await readdir(work);
    const run = await runEmi(work, ['backup', 'bk-damaged', '--state', state]);
    expect(run.code, run.stderr).toBe(1);
    expect(errorLines(run)).toEqual([`emi: ${join(state, 'payments.sqlite')}: file is not a database`]);
    expect(await readdir(work)).toEqual(before);
  });
});
