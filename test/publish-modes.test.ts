// Who may read what a run writes does not depend on the umask it ran under (generator/publish/modes.ts): the public
// generations (the published store's and the build's) are 0755 folders and 0644 files, the paid bodies and the
// state folder's SQLite stores are the owner's alone (0700, 0600). A first run under `umask 077` (root's shell)
// used to leave the stores 0700 for good, so nginx, another user, answered 403; one under `umask 000` left the paid
// bodies 0666 in 0777 folders, for any local user to rewrite. The real CLI runs under the umask a wrapper sets.
import { chmod, lstat, mkdir, mkdtemp, readdir, readlink, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openArenaStore } from '../generator/state/store.ts';
import { openSqliteVoteStore } from '../paywall-worker/arena-vote/store-sqlite.ts';
import { SqlitePaymentBook } from '../paywall-worker/payment-book-sqlite.ts';
import { SqliteCreditLedger } from '../paywall-worker/publishers/credit-ledger-sqlite.ts';
import { generateArgs, runEmi } from './ops-cli.ts';

const BASE_URL = 'http://127.0.0.1:20741';
const underUmask = (mask: string): string[] => ['sh', '-c', `umask ${mask}; exec "$0" "$@"`];
const modeOf = async (path: string): Promise<string> => ((await stat(path)).mode & 0o7777).toString(8);
const asOf = (minutesAgo: number): string =>
  new Date(Math.floor(Date.now() / 60_000) * 60_000 - minutesAgo * 60_000).toISOString();

/** `emi generate --dist dist` in `dir` under `umask`. */
async function generateAndBuild(dir: string, umask: string, minutesAgo: number): Promise<void> {
  const run = await runEmi(
    dir,
    [...generateArgs(asOf(minutesAgo)), '--dist', 'dist', '--base-url', BASE_URL],
    {},
    { wrapper: underUmask(umask) },
  );
  expect(run.code, run.stdout + run.stderr).toBe(0);
}

/** Every folder and file under `root` (symlinks left out) with its mode, as `path: mode`. */
async function modesUnder(root: string): Promise<Map<string, string>> {
  const modes = new Map<string, string>();
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (entry.isSymbolicLink()) continue;
    const path = join(entry.parentPath, entry.name);
    modes.set(path.slice(root.length + 1), await modeOf(path));
  }
  return modes;
}

/** The served generation of a store, as a real path. */
const served = async (store: string): Promise<string> => join(store, await readlink(join(store, 'current')));

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'emi-modes-'));
});
afterAll(() => rm(root, { recursive: true, force: true }));

/** What every run must leave, whatever its umask: public 755/644, paid 700/600. */
async function expectModes(dir: string): Promise<void> {
  for (const store of ['.dist.generations', 'var/published']) {
    expect(await modeOf(join(dir, store)), store).toBe('755');
  }
  const build = await served(join(dir, '.dist.generations'));
  expect(await modeOf(build), 'the build').toBe('755');
  for (const [path, mode] of await modesUnder(build)) {
    const entry = await lstat(join(build, path));
    expect(mode, `dist/${path}`).toBe(entry.isDirectory() ? '755' : '644');
  }
  const published = await served(join(dir, 'var/published'));
  expect(await modeOf(published), 'the published generation').toBe('755');
  for (const [path, mode] of await modesUnder(published)) {
    const folder = (await lstat(join(published, path))).isDirectory();
    const paid = path === 'paid' || path.startsWith('paid/');
    expect(mode, path).toBe(paid ? (folder ? '700' : '600') : folder ? '755' : '644');
  }
  // The links' folders the run made are public; the links lead to the generations.
  expect(await modeOf(join(dir, 'site', 'api')), 'site/api').toBe('755');
  expect(await modeOf(join(dir, 'paid')), 'paid/').toBe('700');
  expect(await modeOf(join(dir, 'dist', 'index.html')), 'dist/index.html').toBe('644');
  // The arena store is its owner's to write and anyone's to read (`emi arena status` as a monitoring user), as are
  // its daily copies.
  expect(await modeOf(join(dir, 'var', 'arena.sqlite')), 'var/arena.sqlite').toBe('644');
  const backups = (await readdir(join(dir, 'var', 'backups'))).filter((name) => name.endsWith('.sqlite'));
  expect(backups.length).toBeGreaterThan(0);
  for (const name of backups) expect(await modeOf(join(dir, 'var', 'backups', name)), name).toBe('644');
}

describe('the modes a run leaves, whatever its umask', () => {
  it('a first run under umask 077, then runs under 022: public stores readable by others, paid kept private', async () => {
    const dir = join(root, 'umask-077');
    await mkdir(dir);
    await generateAndBuild(dir, '077', 2);
    await expectModes(dir);
    await generateAndBuild(dir, '022', 1);
    await expectModes(dir);
  }, 120_000);

  it('a run under umask 000: nothing world-writable, paid bodies and the store its owner’s alone', async () => {
    const dir = join(root, 'umask-000');
    await mkdir(dir);
    await generateAndBuild(dir, '000', 1);
    await expectModes(dir);
  }, 120_000);
});

describe('the SQLite stores a process creates', () => {
  let before: number;
  beforeAll(() => {
    before = process.umask();
  });
  afterEach(() => {
    process.umask(before);
  });

  for (const mask of [0o077, 0o000, 0o022]) {
    it(`are 0600 (the arena store 0644) under umask ${mask.toString(8).padStart(3, '0')}, WAL files too`, async () => {
      process.umask(mask);
      const dir = join(root, `stores-${mask.toString(8)}`);
      const files = {
        arena: join(dir, 'arena.sqlite'),
        votes: join(dir, 'arena-votes.sqlite'),
        payments: join(dir, 'payments.sqlite'),
        publishers: join(dir, 'publishers.sqlite'),
      };
      const arena = openArenaStore(files.arena);
      const votes = openSqliteVoteStore(files.votes);
      const payments = new SqlitePaymentBook(files.payments);
      const publishers = new SqliteCreditLedger(files.publishers);
      try {
        for (const [name, file] of Object.entries(files)) {
          const mode = name === 'arena' ? '644' : '600';
          expect(await modeOf(file), name).toBe(mode);
          expect(await modeOf(`${file}-wal`), `${name}-wal`).toBe(mode);
        }
      } finally {
        arena.close();
        votes.close();
        payments.close();
        publishers.close();
      }
    });
  }

  it('leave the mode of a store that was there before', async () => {
    process.umask(0o022);
    const dir = join(root, 'stores-kept');
    const file = join(dir, 'arena.sqlite');
    openArenaStore(file).close();
    await chmod(file, 0o640); // the operator's choice (a backup group, say)
    openArenaStore(file).close();
    expect(await modeOf(file)).toBe('640');
  });
});
