// What an operator is told when the real `emi` refuses input: a vote file that cannot be imported, a publisher
// configuration with an unknown key or option, and a run whose bodies fail their schema. Bad input exits 2 with
// one line (or, for a vote file, a count and its problems one per line) and writes nothing; a failed run records
// one readable line in last-run.json and status.json, the full detail going to stderr.
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openArenaStore } from '../generator/state/store.ts';
import { afterAll, describe, expect, it } from 'vitest';

const EMI = join(import.meta.dirname, '..', 'bin', 'emi.js');

interface Finished {
  code: number;
  stdout: string;
  stderr: string;
}

/** `emi args` in `cwd`, without the EMI_* variables this machine may have set. */
function emi(cwd: string, args: string[]): Promise<Finished> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('EMI_')));
  return new Promise((resolve) => {
    execFile(process.execPath, [EMI, ...args], { cwd, env }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code) : 0, stdout, stderr });
    });
  });
}

/** The lines on stderr, without the build-freshness notice and commander's pointer to --help. */
const errorLines = (result: Finished): string[] =>
  result.stderr
    .split('\n')
    .filter((l) => l && !l.startsWith('(run with --help') && !l.includes('build/ is out of date'));

function expectRefused(result: Finished, lines: Array<string | RegExp>): void {
  expect(result.code, result.stderr).toBe(2);
  expect(result.stdout).toBe('');
  const printed = errorLines(result);
  expect(printed).toHaveLength(lines.length);
  lines.forEach((line, i) => expect(printed[i]).toMatch(line));
}

const roots: string[] = [];
async function scratch(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'emi-refusals-'));
  roots.push(dir);
  return dir;
}
afterAll(async () => {
  await Promise.all(roots.map((dir) => rm(dir, { recursive: true, force: true })));
});

const exact = (text: string): RegExp => new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);

describe('emi arena import', () => {
  const vote = (over: Record<string, unknown> = {}) =>
    JSON.stringify({ asset: 'BTC', prediction: 'BULLISH', voter: 'alice', ...over });
  const votesIn = (dir: string): number => {
    const db = new Database(join(dir, 'var', 'arena.sqlite'), { readonly: true });
    try {
      return (db.prepare('SELECT COUNT(*) AS n FROM votes').get() as { n: number }).n;
    } finally {
      db.close();
    }
  };

  it('a missing file or a folder: one line naming it, exit 2, no store made', async () => {
    const dir = await scratch();
    expectRefused(await emi(dir, ['arena', 'import', 'votes.jsonl']), [
      exact('emi arena: cannot read votes.jsonl: no such file; nothing was imported'),
    ]);
    expectRefused(await emi(dir, ['arena', 'import', '.']), [
      exact('emi arena: cannot read .: it is a folder, not a file; nothing was imported'),
    ]);
    expect(await readdir(dir)).toEqual([]);
  });

  /** A folder whose var/ holds a store as a run leaves it: import refuses a store no run has made. */
  const withRunsStore = async (): Promise<string> => {
    const dir = await scratch();
    openArenaStore(join(dir, 'var', 'arena.sqlite')).close();
    return dir;
  };

  it('a file that is not JSON Lines of votes: one line naming the file and the problem, exit 2', async () => {
    const dir = await withRunsStore();
    await writeFile(join(dir, 'notes.txt'), 'BTC up, ETH down\n');
    await writeFile(join(dir, 'pretty.json'), `${JSON.stringify([JSON.parse(vote())], null, 2)}\n`);
    await writeFile(join(dir, 'wrapped.json'), `${JSON.stringify({ votes: [JSON.parse(vote())] })}\n`);
    expectRefused(await emi(dir, ['arena', 'import', 'notes.txt']), [
      exact('emi arena: nothing imported from notes.txt: line 1: not valid JSON'),
    ]);
    expectRefused(await emi(dir, ['arena', 'import', 'pretty.json']), [
      exact(
        'emi arena: nothing imported from pretty.json: the file is one JSON document, not JSON Lines: ' +
          'put each vote on a line of its own',
      ),
    ]);
    expectRefused(await emi(dir, ['arena', 'import', 'wrapped.json']), [
      exact(
        'emi arena: nothing imported from wrapped.json: line 1: unknown key "votes" ' +
          '(a vote has asset, prediction, voter, at, round_id)',
      ),
    ]);
  });

  it('some valid and some invalid lines: every problem in line order, exit 2, nothing imported', async () => {
    const dir = await withRunsStore();
    const lines = [
      vote(),
      vote({ voter: 'bob', asset: 'DOGE' }),
      '{"asset": "BTC",',
      vote({ voter: 'carol', round: 'BTC-20261121T12Z' }), // `round` for `round_id`: never dropped silently
      vote({ voter: 'dave' }),
    ];
    await writeFile(join(dir, 'votes.jsonl'), `${lines.join('\n')}\n`);
    expectRefused(await emi(dir, ['arena', 'import', 'votes.jsonl']), [
      exact('emi arena: nothing imported from votes.jsonl: 3 problems'),
      /^ {2}line 2: unknown asset "DOGE"; expected one of BTC, /,
      exact('  line 3: not valid JSON'),
      /^ {2}line 4: unknown key "round" \(a vote has /,
    ]);
    expect(votesIn(dir)).toBe(0);
    // The same file without its bad lines imports whole.
    await writeFile(join(dir, 'votes.jsonl'), `${[lines[0], lines[4]].join('\n')}\n`);
    const imported = await emi(dir, ['arena', 'import', 'votes.jsonl']);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toBe('imported 2 votes from votes.jsonl\n');
    expect(votesIn(dir)).toBe(2);
  });
});

describe('emi publisher add', () => {
  // A valid Algorand address (the checksum is checked), not the operator's.
  const PAY_TO = 'WUIZKOX3DALYEKZCBWHXPIGHGTWBA4LSLAHUNOW7KBZ5RL3PFWJAE43NRA';
  const add = (config: string, ...extra: string[]) => [
    'publisher',
    'add',
    '--config',
    config,
    '--id',
    'atlas-co',
    '--name',
    'Atlas Co',
    '--pay-to',
    PAY_TO,
    '--contact',
    'https://atlas.example',
    '--terms',
    'https://atlas.example/terms',
    '--product',
    'atlas=0.50',
    '--credits',
    '5',
    ...extra,
  ];
  const existing = {
    id: 'first',
    brand: { name: 'First', contactUrl: 'https://first.example', termsUrl: 'https://first.example/t' },
    payTo: PAY_TO,
    products: { atlas: { priceUsd: '0.50' } },
  };

  it('refuses an unknown top-level key of the config file, naming it, and writes nothing', async () => {
    const dir = await scratch();
    const text = `${JSON.stringify({ publisher: [existing] }, null, 2)}\n`;
    await writeFile(join(dir, 'emi.json'), text);
    expectRefused(await emi(dir, add('emi.json')), [
      exact('emi: configuration file emi.json: unknown key "publisher" (known: sources, publishers)'),
    ]);
    expect(await readFile(join(dir, 'emi.json'), 'utf8')).toBe(text);
    expect(await readdir(dir)).toEqual(['emi.json']); // no credit ledger either

    // Spelt right, the entry is added beside the keys the file already has.
    await writeFile(join(dir, 'emi.json'), JSON.stringify({ sources: {}, publishers: [existing] }));
    const added = await emi(dir, add('emi.json'));
    expect(added.code, added.stderr).toBe(0);
    const written = JSON.parse(await readFile(join(dir, 'emi.json'), 'utf8')) as {
      sources: object;
      publishers: Array<{ id: string }>;
    };
    expect(written.sources).toEqual({});
    expect(written.publishers.map((p) => p.id)).toEqual(['first', 'atlas-co']);
  });

  it('refuses an unknown key in an entry already in the file, naming it, and writes nothing', async () => {
    const dir = await scratch();
    const text = JSON.stringify({
      publishers: [{ ...existing, brand: { ...existing.brand, colour: '#123456' } }],
    });
    await writeFile(join(dir, 'emi.json'), text);
    expectRefused(await emi(dir, add('emi.json')), [/^emi: publisher "first": brand: .*"colour"/]);
    expect(await readFile(join(dir, 'emi.json'), 'utf8')).toBe(text);
    expect(await readdir(dir)).toEqual(['emi.json']);
  });

  it.each([
    [['--colour', '#123456'], exact("error: unknown option '--colour'")],
    [['extra'], /^error: too many arguments for 'add'/],
    [['--product', 'atlas=0.5=1'], /argument 'atlas=0\.5=1' is invalid\. --product wants SLUG=PRICE/],
    [['--product', 'atlas=0.70'], /argument 'atlas=0\.70' is invalid\. product atlas is given twice$/],
    [['--product', 'atlass=1'], /^emi: publisher "atlas-co": products\.atlass: unknown product/],
  ])('refuses %j with one line, exit 2, and writes nothing', async (extra, line) => {
    const dir = await scratch();
    expectRefused(await emi(dir, add('emi.json', ...extra)), [line]);
    expect(await readdir(dir)).toEqual([]);
  });
});

describe('last-run.json after a run whose bodies fail their schema', () => {
  it('holds one readable line; stderr has the whole zod error', async () => {
    const dir = await scratch();
    const backfill = await emi(dir, ['backfill', '--days', '1', '--no-out']);
    expect(backfill.code, backfill.stderr).toBe(0);
    // Lessons the store hands back in a shape the teacher-lessons schema refuses.
    const db = new Database(join(dir, 'var', 'arena.sqlite'));
    try {
      const lessons = db.prepare('SELECT lesson_id, body FROM lessons').all() as Array<{
        lesson_id: string;
        body: string;
      }>;
      expect(lessons.length).toBeGreaterThan(0);
      const update = db.prepare('UPDATE lessons SET body = ? WHERE lesson_id = ?');
      for (const { lesson_id, body } of lessons) {
        update.run(JSON.stringify({ ...(JSON.parse(body) as object), asset: 5 }), lesson_id);
      }
    } finally {
      db.close();
    }

    const result = await emi(dir, ['generate']);
    expect(result.code).toBe(1);
    const lastRun = JSON.parse(await readFile(join(dir, 'var', 'last-run.json'), 'utf8')) as {
      status: string;
      error: string;
    };
    expect(lastRun.status).toBe('failed');
    expect(lastRun.error).not.toContain('\n');
    expect(lastRun.error).toMatch(
      /^latest_lessons\.0\.asset: Invalid option: expected one of .* \(and \d+ more problem\(s\)\)$/,
    );
    const status = JSON.parse(await readFile(join(dir, 'site', 'status.json'), 'utf8')) as {
      last_run: { error: string };
    };
    expect(status.last_run.error).toBe(lastRun.error);
    // The operator still sees every issue: the whole zod error on stderr, then the one-line summary.
    expect(result.stderr).toContain('emi: the run failed: [\n');
    expect(result.stderr).toContain('"code": "invalid_value"');
    expect(errorLines(result).at(-1)).toBe(
      `emi: generate failed: ${lastRun.error} (the last good files were left in place)`,
    );
  });
});
