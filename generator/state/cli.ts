// `emi arena import FILE`, `emi arena vote ...` and `emi arena status`, each on a store a run has made. Errors print
// as one line (a refused import: a count and its problems, one per line) with a non-zero exit code, never as a stack
// trace.
import { existsSync, readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { USAGE_EXIT_CODE } from '../cli-options.ts';
import { openArenaStore, type ArenaStore } from './store.ts';
import { noStateFolderMessage, openStoreForStatus, statusFailure, statusLines } from './status.ts';
import { addHumanVotes, importVotesJsonl, VoteValidationError } from './votes.ts';
import { describeRepair, repairStore } from './repair.ts';
import { openStoreChecked } from './store-access.ts';
import { ArenaStoreBusyError, runOwner, withFileRunLock, withStoreRunLockIfItOpens } from './lock.ts';
import { dirname, join, resolve } from 'node:path';

export interface ArenaCommandDeps {
  storePath: () => string;
  /** Wall clock; injectable for tests. */
  now?: () => number;
  /** Where lines go; defaults to the console. */
  out?: (line: string) => void;
  err?: (line: string) => void;
}

/** `--state <dir>` of every `emi arena` command, as `emi generate`, `emi backfill` and `emi publisher` take it. */
interface StateOption {
  state?: string;
}

const STATE_HELP = "the runs' state folder, holding arena.sqlite (default: EMI_STATE_DIR or var)";

/** The store file: in --state when given, else where the runs keep it by default (EMI_STATE_DIR or var). */
const storeFileOf = (deps: ArenaCommandDeps, o: StateOption): string =>
  o.state === undefined ? deps.storePath() : resolve(o.state, 'arena.sqlite');

const withStore = <T>(deps: ArenaCommandDeps, o: StateOption, fn: (store: ArenaStore) => T): T => {
  const file = storeFileOf(deps, o);
  // Another user's store (a state folder restored by `sudo cp`) is said as such, not as SQLite's bare words.
  const store = openStoreChecked('the arena store', file, () => openArenaStore(file));
  try {
    return fn(store);
  } finally {
    store.close();
  }
};

/**
 * Refuses a store no run has made, in `emi arena status`'s words and with its exit code (1), creating nothing, not
 * even the folder: a vote or an import there (a mistyped --state or EMI_STATE_DIR) went to a new store that no run
 * reads, so it never reached the published consensus.
 */
const refuseMissingStore = (file: string): void => {
  if (existsSync(file)) return;
  // Where there is no file this throws status's refusal ("no arena store at …"); it opens nothing, writes nothing.
  openStoreForStatus(file).store.close();
};

/** Input the command refuses, as the lines to print: exit code 2, as other usage mistakes. */
class RefusedInput extends Error {
  constructor(readonly lines: string[]) {
    super(lines.join('\n'));
  }
}

/**
 * Runs an action; a refused input prints its lines and exits 2 (a refused vote: nothing was written), any other
 * failure becomes one line on stderr and exit code 1.
 */
const guarded =
  <A extends unknown[]>(deps: ArenaCommandDeps, action: (...args: A) => void) =>
  (...args: A): void => {
    const err = deps.err ?? console.error;
    try {
      action(...args);
    } catch (error) {
      if (error instanceof RefusedInput) {
        for (const line of error.lines) err(line);
        process.exitCode = USAGE_EXIT_CODE;
        return;
      }
      const message = error instanceof Error ? error.message : String(error);
      const refused = error instanceof VoteValidationError;
      err(`emi arena: ${refused ? 'nothing was written: ' : ''}${message.replace(/\s*\n\s*/g, ' ')}`);
      process.exitCode = refused ? USAGE_EXIT_CODE : 1;
    }
  };

/** The vote file's text; a file that cannot be read is refused in one line saying why. */
const readVoteFile = (file: string): string => {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EISDIR'
          ? 'it is a folder, not a file'
          : code === 'EACCES' || code === 'EPERM'
            ? 'permission denied'
            : message;
    throw new RefusedInput([`emi arena: cannot read ${file}: ${why}; nothing was imported`]);
  }
};

/** A refused import: one line for one problem, else a count and the problems one per line (the first 20). */
const importRefused = (file: string, error: VoteValidationError): RefusedInput => {
  const head = `emi arena: nothing imported from ${file}`;
  if (error.problems.length === 1) return new RefusedInput([`${head}: ${error.problems[0]}`]);
  return new RefusedInput([
    `${head}: ${error.problems.length} problems`,
    ...error.shown.map((problem) => `  ${problem}`),
  ]);
};

/**
 * The last run as recorded in the state folder's last-run.json, one line: a run that failed (a folder it may not
 * write to, a full disk) shows here even though it never reached the store's run log.
 */
export function lastRunLine(stateDir: string): string {
  const file = join(stateDir, 'last-run.json');
  let report: { status?: unknown; finished_at?: unknown; error?: unknown };
  try {
    report = JSON.parse(readFileSync(file, 'utf8')) as typeof report;
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    return `last run: ${missing ? 'none recorded' : 'unreadable'} (${file})`;
  }
  const error = typeof report.error === 'string' && report.error ? `: ${report.error}` : '';
  return `last run: ${String(report.status)}, finished ${String(report.finished_at)}${error}`;
}

export function registerArenaCommands(program: Command, deps: ArenaCommandDeps): void {
  const now = deps.now ?? Date.now;
  const out = deps.out ?? console.log;
  const arena = program
    .command('arena')
    .description('arena rounds and votes (stored in the arena SQLite store)');

  arena
    .command('import')
    .description(
      'import votes from a JSON Lines file: {"asset","prediction","voter","at"?} per line; all or none',
    )
    .argument('<file>', 'JSON Lines file')
    .option('--state <dir>', STATE_HELP)
    .action(
      guarded(deps, (file: string, o: StateOption) => {
        const text = readVoteFile(file);
        refuseMissingStore(storeFileOf(deps, o));
        const written = withStore(deps, o, (store) => {
          try {
            return importVotesJsonl(store, text, now());
          } catch (error) {
            throw error instanceof VoteValidationError ? importRefused(file, error) : error;
          }
        });
        out(`imported ${written} votes from ${file}`);
      }),
    );

  arena
    .command('vote')
    .description("add one vote, received now, to the asset's next round (or --round)")
    .requiredOption('--asset <symbol>', 'BTC, ETH, XRP, SOL, ALGO, XLM or HBAR')
    .requiredOption('--prediction <value>', 'BULLISH, BEARISH or NEUTRAL')
    .requiredOption('--voter <id>', 'voter id (stored only as a salted hash)')
    .option('--round <id>', "round id, e.g. BTC-20250101T10Z; default the asset's round open to votes now")
    .option('--state <dir>', STATE_HELP)
    .action(
      guarded(
        deps,
        (o: StateOption & { asset: string; prediction: string; voter: string; round?: string }) => {
          const raw = { asset: o.asset, prediction: o.prediction, voter: o.voter, round_id: o.round };
          refuseMissingStore(storeFileOf(deps, o));
          const [written] = withStore(deps, o, (store) =>
            addHumanVotes(store, [{ label: null, raw }], now()),
          );
          out(`vote recorded for ${written!.roundId}`);
        },
      ),
    );

  arena
    .command('repair')
    .description(
      'check the store; if damaged, save it aside and restore the newest daily backup, or start fresh',
    )
    .option('--state <dir>', STATE_HELP)
    .action(async (o: StateOption) => {
      const file = storeFileOf(deps, o);
      // A folder that is not there is another folder than the runs' (the wrong working folder, no --state): said
      // so, rather than as a missing run.lock inside it.
      if (!existsSync(dirname(file))) {
        (deps.err ?? console.error)(`emi arena: ${noStateFolderMessage(file)}`);
        process.exitCode = 1;
        return;
      }
      try {
        // Under both run locks: the one a run takes when the store cannot be opened, and the one inside the store
        // when it opens (a store that fails its integrity check may still open and run). No run writes while the
        // file moves, into the file moved aside.
        const owner = runOwner();
        const result = await withFileRunLock(join(dirname(file), 'run.lock'), owner, () =>
          withStoreRunLockIfItOpens(file, owner, () => repairStore(file, now())),
        );
        out(describeRepair(file, result));
      } catch (error) {
        const busy = error instanceof ArenaStoreBusyError;
        const message = (error as Error).message;
        (deps.err ?? console.error)(
          `emi arena: ${busy ? `repair refused, nothing was moved: ${message}` : `repair failed: ${message}`}`,
        );
        process.exitCode = 1;
      }
    });

  arena
    .command('status')
    .description('show the last run, the open round, counts and the run lock')
    .option('--state <dir>', STATE_HELP)
    .action(
      guarded(deps, (o: StateOption) => {
        const file = storeFileOf(deps, o);
        // First, so that it shows even when the store cannot be opened.
        out(lastRunLine(dirname(file)));
        // Read-only: no store is created where there is none, none migrated, no write access needed.
        const opened = (() => {
          try {
            return openStoreForStatus(file);
          } catch (error) {
            throw statusFailure(file, error);
          }
        })();
        let lines: string[];
        try {
          for (const note of opened.notes) (deps.err ?? console.error)(`emi arena: ${note}`);
          lines = statusLines(opened, now());
        } catch (error) {
          throw statusFailure(file, error); // a store damaged beyond its first page fails while read
        } finally {
          opened.store.close();
        }
        for (const line of lines) out(line);
      }),
    );
}
