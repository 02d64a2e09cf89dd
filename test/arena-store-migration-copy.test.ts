// Upgrading migrates the arena store on its first open, after which the release it came from cannot run its cycles
// on it. Before migrating, the store is copied at its old schema (backups/arena-schema-N.sqlite, once) and one line
// on stderr says what happened and where the copy is; a fresh store or a current one says nothing.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LATEST_SCHEMA_VERSION, openArenaStore, versionOf } from '../generator/state/store.ts';
import { schemaOneStore, tempStorePath } from './arena-fixtures.ts';

/** A store at schema version 1, as an emi from before the later migrations left it, with one meta row in it. */
function schemaOneStoreWithMeta(): string {
  const { file, db } = schemaOneStore('2026-11-01T00:00:00Z');
  db.prepare("INSERT INTO meta (key, value) VALUES ('kept', 'from schema 1')").run();
  db.close();
  return file;
}

const stderrLines = () => {
  const spy = vi.spyOn(console, 'error').mockImplementation(() => undefined);
  return () => spy.mock.calls.map((call) => String(call[0]));
};
afterEach(() => vi.restoreAllMocks());

describe('opening an arena store an older emi wrote', () => {
  it('keeps a copy at its old schema, migrates it, and says so in one line', () => {
    expect(LATEST_SCHEMA_VERSION).toBeGreaterThan(1);
    const file = schemaOneStoreWithMeta();
    const lines = stderrLines();
    openArenaStore(file).close();
    const copy = join(dirname(file), 'backups', 'arena-schema-1.sqlite');
    expect(lines()).toEqual([
      `emi: the arena store ${file} was migrated from schema version 1 to ${LATEST_SCHEMA_VERSION}; an emi older ` +
        `than this one cannot run its cycles on it any more (a copy from before is ${copy})`,
    ]);
    const old = new Database(copy, { readonly: true });
    expect(versionOf(old)).toBe(1);
    expect(old.prepare("SELECT value FROM meta WHERE key = 'kept'").get()).toEqual({
      value: 'from schema 1',
    });
    old.close();
    const migrated = new Database(file, { readonly: true });
    expect(versionOf(migrated)).toBe(LATEST_SCHEMA_VERSION);
    migrated.close();
  });

  it('says nothing and copies nothing for a new store or one already migrated', () => {
    const file = tempStorePath();
    const lines = stderrLines();
    openArenaStore(file).close(); // new
    openArenaStore(file).close(); // current
    expect(lines()).toEqual([]);
    expect(existsSync(join(dirname(file), 'backups'))).toBe(false);
  });
});
