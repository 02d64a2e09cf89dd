// A state folder whose SQLite files' paths are longer than SQLite accepts (504 bytes, as it adds "-journal" within
// 512): SQLite says SQLITE_CANTOPEN, as for a damaged file, and runs used to call the store "damaged" and send the
// operator to a repair that found no store. Each command says what it is instead: the path, its length, a shorter --state.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { longPathMessage, longPathProblem } from '../generator/state/sqlite-open-error.ts';
import { runEmi } from './ops-cli.ts';

let dir: string;
let state: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'emi-long-state-'));
  // Folder names of 120 bytes (each under the file system's 255) until the path is over 500 bytes.
  state = dir;
  while (Buffer.byteLength(state) < 505)
    state = join(state, 's'.repeat(120).slice(0, 505 - state.length + 1));
  await mkdir(state, { recursive: true });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const saysLongPath = (text: string, file: string) => {
  expect(text).toContain(`the path ${join(state, file)} is ${Buffer.byteLength(join(state, file))} bytes`);
  expect(text).toContain('longer than SQLite accepts (504, as it adds "-journal" within its limit of 512)');
  expect(text).toContain('use a shorter --state (or EMI_STATE_DIR)');
  expect(text).not.toMatch(/damaged|repair/);
};

describe('a state folder path too long for SQLite', () => {
  it('emi generate says the path is too long, never damaged nor repair', async () => {
    const run = await runEmi(dir, ['generate', '--out', 'site', '--paid', 'paid', '--state', state]);
    saysLongPath(run.stderr, 'arena.sqlite');
  });

  it('emi arena repair says the same, not that the store does not exist', async () => {
    const run = await runEmi(dir, ['arena', 'repair', '--state', state]);
    // The command's own prefix ("emi arena: repair failed:") names it; the reason sends to no repair.
    saysLongPath(run.stderr.replace('emi arena: repair failed: ', ''), 'arena.sqlite');
    expect(run.stdout + run.stderr).not.toContain('does not exist');
    expect(run.code).not.toBe(0);
  });

  it('emi publisher list names the ledger file and its length', async () => {
    const run = await runEmi(dir, ['publisher', 'list'], { EMI_STATE_DIR: state });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain(`the path ${state}/`);
    expect(run.stderr).toContain('longer than SQLite accepts (504');
  });

  it('leaves other open failures and paths SQLite accepts to their own words', () => {
    const cantOpen = Object.assign(new Error('unable to open database file'), { code: 'SQLITE_CANTOPEN' });
    expect(longPathProblem('/tmp/short/arena.sqlite', cantOpen)).toBeNull();
    expect(longPathProblem(join(state, 'arena.sqlite'), new Error('other'))).toBeNull();
    const edge = `/${'x'.repeat(503)}`; // 504 bytes: the longest path SQLite opens
    expect(longPathMessage(edge)).toBeNull();
    expect(longPathMessage(`${edge}y`)).toContain('is 505 bytes');
  });
});
