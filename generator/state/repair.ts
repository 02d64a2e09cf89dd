// Keeping the arena store recoverable: a daily online backup (SQLite's backup API, safe while the store is in use),
// an integrity check, and a repair that saves a damaged file aside, then restores the newest sound backup or starts
// fresh. What `emi arena repair` runs, and what a run's error message points to.
import { copyFile, mkdir, readdir, rename, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import type { ArenaStore } from './store.ts';

export const BACKUPS_KEPT = 7;
const BACKUP_NAME = /^arena-(\d{4}-\d{2}-\d{2})\.sqlite$/;

export const backupFolder = (storeFile: string): string => join(dirname(storeFile), 'backups');

/** SQLite's own words for a damaged, foreign or unreadable store file. */
export function isDamagedStoreError(error: unknown): boolean {
  const code = (error as { code?: string }).code ?? '';
  return /^SQLITE_(CORRUPT|NOTADB|CANTOPEN)/.test(code);
}

/** The one-line remedy shown when a run meets a damaged store. */
export const damagedStoreMessage = (storeFile: string, error: unknown): string =>
  `the arena store ${storeFile} is damaged (${(error as Error).message}): the market snapshots were published, ` +
  `the arena files kept as they were; run "emi arena repair" (it saves the damaged file aside, then restores ` +
  `the newest daily backup or starts a fresh store)`;

/** Once a day (UTC), copies the store into backups/arena-YYYY-MM-DD.sqlite and keeps the last few. */
export async function dailyBackup(store: ArenaStore, now: number = Date.now()): Promise<string | null> {
  const folder = backupFolder(store.path);
  const target = join(folder, `arena-${new Date(now).toISOString().slice(0, 10)}.sqlite`);
  if (existsSync(target)) return null;
  await mkdir(folder, { recursive: true });
  const partial = `${target}.partial`;
  await store.db.backup(partial);
  // The backup is taken while this run holds the run lock: a restored copy must not carry it.
  const copy = new Database(partial);
  try {
    copy.prepare('DELETE FROM run_lock').run();
  } finally {
    copy.close();
  }
  await rename(partial, target);
  const backups = (await readdir(folder)).filter((name) => BACKUP_NAME.test(name)).sort();
  for (const old of backups.slice(0, -BACKUPS_KEPT)) await rm(join(folder, old), { force: true });
  return target;
}

/** 'ok', or what SQLite found wrong with the file. */
export function integrityOf(file: string): string {
  let db: Database.Database | null = null;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    const rows = db.pragma('integrity_check') as Array<{ integrity_check: string }>;
    const problems = rows.map((row) => row.integrity_check).filter((text) => text !== 'ok');
    return problems.length === 0 ? 'ok' : problems.slice(0, 3).join('; ');
  } catch (error) {
    return (error as Error).message;
  } finally {
    db?.close();
  }
}

export interface RepairResult {
  action: 'healthy' | 'restored' | 'fresh';
  /** Where the damaged file was saved (not for a healthy store). */
  savedAs: string | null;
  backup: string | null;
  problem: string | null;
}

/** Checks the store; if damaged, moves it (and its WAL) aside, then restores the newest sound backup or starts fresh. */
export async function repairStore(storeFile: string, now: number = Date.now()): Promise<RepairResult> {
  if (!existsSync(storeFile))
    return { action: 'fresh', savedAs: null, backup: null, problem: 'no store yet' };
  const problem = integrityOf(storeFile);
  if (problem === 'ok') return { action: 'healthy', savedAs: null, backup: null, problem: null };
  const savedAs = `${storeFile}.damaged-${new Date(now).toISOString().replace(/[:.]/g, '-')}`;
  await rename(storeFile, savedAs);
  for (const suffix of ['-wal', '-shm']) {
    if (existsSync(storeFile + suffix)) await rename(storeFile + suffix, savedAs + suffix);
  }
  const folder = backupFolder(storeFile);
  const backups = existsSync(folder)
    ? (await readdir(folder))
        .filter((name) => BACKUP_NAME.test(name))
        .sort()
        .reverse()
    : [];
  for (const name of backups) {
    const backup = join(folder, name);
    if (integrityOf(backup) !== 'ok') continue;
    await copyFile(backup, `${storeFile}.restoring`);
    await rename(`${storeFile}.restoring`, storeFile);
    return { action: 'restored', savedAs, backup, problem };
  }
  return { action: 'fresh', savedAs, backup: null, problem };
}

export function describeRepair(storeFile: string, result: RepairResult): string {
  switch (result.action) {
    case 'healthy':
      return `${storeFile}: integrity check ok, nothing to repair`;
    case 'restored':
      return (
        `${storeFile} was damaged (${result.problem}); saved it as ${basename(result.savedAs ?? '')} ` +
        `and restored the backup ${basename(result.backup ?? '')}`
      );
    case 'fresh':
      return result.savedAs
        ? `${storeFile} was damaged (${result.problem}) and no sound backup exists; saved it as ` +
            `${basename(result.savedAs)}: the next run starts a fresh store`
        : `${storeFile} does not exist yet: the next run creates it`;
  }
}
