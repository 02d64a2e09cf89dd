// `emi backup DIR`: what the command checks and says around state/backup.ts, which does the copying. Loaded only
// when the command runs (it opens SQLite).
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { usageError } from './cli-options.ts';
import { backupState } from './state/backup.ts';
import { repairAdvice } from './state/backup-notes.ts';
import {
  backupPlaceProblem,
  guardedFolders,
  reachedPath,
  removeStaleTemporaries,
  targetProblem,
} from './state/backup-place.ts';
import type { StoreCopy } from './state/backup.ts';

export interface BackupFlags {
  state: string;
  config?: string;
  /** emi's version, written in BACKUP.txt. */
  version: string;
}

/** A size as people read it: bytes, KB or MB (1024-based, as ls -h). */
export function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

const storeLine = (copy: StoreCopy): string => `${copy.name} ${sizeText(copy.bytes)}`;

/** A state folder with nothing a backup keeps is a wrong --state, said before anything is written (exit 2). */
async function checkStateFolder(state: string): Promise<void> {
  const info = await stat(state).catch(() => null);
  if (info === null)
    throw usageError(
      `nothing to back up: the state folder ${state} does not exist (--state, env EMI_STATE_DIR)`,
    );
  if (!info.isDirectory())
    throw usageError(`nothing to back up: ${state} is not a folder (--state, env EMI_STATE_DIR)`);
}

/**
 * Backs up the state folder into `dir`: refused (exit 2, nothing written) when DIR is inside the state folder or a
 * published folder, holds anything, or the state folder is missing; one line per store copied, then one naming DIR.
 * A damaged store is left out with a line on stderr (exit 1, the rest kept in DIR). A failure is thrown as one line
 * naming the file, and leaves no DIR.
 */
export async function runBackup(dir: string, flags: BackupFlags): Promise<void> {
  const place = backupPlaceProblem(
    dir,
    await reachedPath(dir),
    await guardedFolders(await reachedPath(flags.state), process.cwd()),
  );
  if (place) throw usageError(`refusing to back up: ${place}`);
  // Left by a backup killed outright (SIGKILL, power loss): would otherwise make DIR look taken.
  await removeStaleTemporaries(dir);
  const problem = await targetProblem(dir);
  if (problem) throw usageError(`refusing to back up: ${problem}`);
  await checkStateFolder(flags.state);
  // An empty EMI_CONFIG is unset, as for the other commands.
  const config = flags.config ?? (process.env.EMI_CONFIG || undefined);
  const result = await backupState({
    dir,
    state: flags.state,
    config,
    version: flags.version,
    onStore: (copy) => console.log(storeLine(copy)),
    onSkipped: (store, file) =>
      console.error(`emi: ${file} is damaged (${store.cause}), not backed up: ${repairAdvice(store.name)}`),
  });
  if (result.stores.length === 0) console.log(`no SQLite store in ${resolve(flags.state)}`);
  if (result.skipped.length > 0) {
    // Incomplete: exit 1, though what was copied is kept (the other stores are worth having).
    process.exitCode = 1;
    const names = result.skipped.map((store) => store.name).join(', ');
    console.log(`backed up ${resolve(flags.state)} into ${result.dir} WITHOUT ${names} (see BACKUP.txt)`);
    return;
  }
  console.log(`backed up ${resolve(flags.state)} into ${result.dir}`);
}
