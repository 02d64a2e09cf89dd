// The damaged-store line names the repair command that reaches the run's store. The audit ran with
// `--state /tmp/x/var` and was told `run "emi arena repair"`: that command has no --state, reads EMI_STATE_DIR or
// ./var, and run as told from another folder failed with `repair failed: ENOENT: ... var/run.lock`.
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { integrityOf, repairCommand } from '../generator/state/repair.ts';
import { corruptStore, errorLines, generateArgs, runEmi } from './ops-cli.ts';
import { tempDir } from './helpers/temp-dir.ts';

describe('the damaged-store line names a repair command that reaches the store', () => {
  it('a run with --state elsewhere: the line names --state, and that command repairs it from another folder', async () => {
    const dir = await tempDir('emi-lines-store-');
    const state = join(dir, 'elsewhere', 'var');
    const first = await runEmi(dir, generateArgs('2026-11-21T12:00:00Z', state));
    expect(first.code, first.stderr).toBe(0);
    await corruptStore(join(state, 'arena.sqlite'));

    const damaged = await runEmi(dir, generateArgs('2026-11-21T13:00:00Z', state));
    expect(damaged.code).toBe(1);
    const said = /run "([^"]+)"/.exec(damaged.stderr)?.[1];
    expect(said).toBe(`emi arena repair --state ${state}`);

    // `emi arena status` on that store says the same command.
    const status = await runEmi(dir, ['arena', 'status', '--state', state]);
    expect(status.code).toBe(1);
    expect(status.stderr).toContain(
      `is damaged (file is not a database): run "emi arena repair --state ${state}"`,
    );

    // Typed as told, in a folder that has no var/ of its own: the damaged store is saved aside and the backup restored.
    const elsewhere = await tempDir('emi-lines-store-cwd-');
    const repair = await runEmi(elsewhere, (said ?? '').split(' ').slice(1));
    expect(repair.code, repair.stderr).toBe(0);
    expect(repair.stdout).toMatch(/was damaged .*restored the backup arena-\d{4}-\d{2}-\d{2}\.sqlite/);
    expect(integrityOf(join(state, 'arena.sqlite'))).toBe('ok');
    expect(await readdir(elsewhere)).toEqual([]);
  }, 120_000);

  it('emi arena repair where there is no state folder says so, not ENOENT on run.lock, and creates nothing', async () => {
    const dir = await tempDir('emi-lines-nostate-');
    const repair = await runEmi(dir, ['arena', 'repair']);
    expect(repair.code).toBe(1);
    expect(errorLines(repair)).toEqual([
      `emi arena: no state folder ${join(dir, 'var')}: give the runs' --state with --state (or set ` +
        'EMI_STATE_DIR to it) (nothing was created)',
    ]);
    const missing = await runEmi(dir, ['arena', 'repair', '--state', 'runs/var']);
    expect(errorLines(missing)).toEqual([
      expect.stringMatching(/^emi arena: no state folder \S+\/runs\/var: /),
    ]);
    expect(await readdir(dir)).toEqual([]);
  }, 60_000);
});

describe('repairCommand', () => {
  const cwdVar = join(process.cwd(), 'var', 'arena.sqlite');

  it('is the bare command only for ./var with EMI_STATE_DIR unset (what the bare command reads)', () => {
    expect(repairCommand(cwdVar, {})).toBe('emi arena repair');
    expect(repairCommand('var/arena.sqlite', { EMI_STATE_DIR: '' })).toBe('emi arena repair');
  });

  it('names an absolute --state for any other store, a unit that sets EMI_STATE_DIR included', () => {
    expect(repairCommand('/srv/emi/state/arena.sqlite', {})).toBe('emi arena repair --state /srv/emi/state');
    // The operator's shell may not have the unit's variable: the folder is named even when it is ./var.
    expect(repairCommand(cwdVar, { EMI_STATE_DIR: 'var' })).toBe(
      `emi arena repair --state ${join(process.cwd(), 'var')}`,
    );
    expect(repairCommand('/srv/my state/arena.sqlite', {})).toBe("emi arena repair --state '/srv/my state'");
  });
});
