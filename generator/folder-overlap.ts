// The folders one command is given must not overlap. A run replaces its public output's api/ and arena/, its paid
// folder and its build output by links to its generations, and moves a real folder found there aside: given the
// working folder (`--out .`, `--out ""`), an ancestor of it, or a folder another option also names or holds, that
// move took the whole working folder (its state, .git, node_modules) or another option's files with it. The rule is
// lexical (paths as given, resolved against the working folder), not through symlinks: after the first run the
// paid folder is a link into the state folder by design. The state folder may hold the others (it is never moved).
// Across commands, `emi generate --out` and
// `emi build --published` name the same folder by design; within one command no two folder options may meet.
import { isAbsolute, relative, resolve, sep } from 'node:path';

/** One folder option of a command, as the operator gave it. */
export interface FolderOption {
  /** How the operator named it: `--out`, or `EMI_STATE_DIR` for a state folder taken from the environment. */
  name: string;
  /** The path as given (relative to the working folder, or absolute). */
  path: string;
  /** A run replaces this folder, or folders directly in it, by links to its generations. */
  linked: boolean;
  /**
   * Other folders may sit inside it: the state folder is never linked, moved or published, so a deployment with one
   * data folder (`EMI_STATE_DIR=/data`, `--out /data/site`) is fine. Never the same folder as another, though.
   */
  holdsOthers?: boolean;
  /** The option's default, said in the refusal as a folder that works (none for --record and --replay). */
  usual?: string;
}

/** Whether `inner` is `outer` or inside it (both absolute). */
export function isSameOrInside(inner: string, outer: string): boolean {
  const path = relative(outer, inner);
  return path === '' || (path !== '..' && !path.startsWith(`..${sep}`) && !isAbsolute(path));
}

const named = (folder: FolderOption): string => `${folder.name} ${folder.path}`;

/** " (default --out site)", " (defaults --out site, --paid paid)", or "" for options without a default. */
function defaults(...folders: FolderOption[]): string {
  const usual = folders.flatMap((f) => (f.usual === undefined ? [] : [`${f.name} ${f.usual}`]));
  if (usual.length === 0) return '';
  return ` (${usual.length === 1 ? 'default' : 'defaults'} ${usual.join(', ')})`;
}

/**
 * Why these folders of one command cannot be used together (one line naming the options and what to do), or null
 * when they can: a linked folder that is empty, the working folder or an ancestor of it; two options naming the
 * same folder, or one inside the other.
 */
export function folderOverlapProblem(folders: readonly FolderOption[], cwd: string): string | null {
  for (const folder of folders) {
    if (folder.path.trim() === '') {
      return (
        `${folder.name} is empty, which names the working folder: ` +
        `give it a folder of its own${defaults(folder)}`
      );
    }
  }
  for (const folder of folders.filter((f) => f.linked)) {
    if (isSameOrInside(cwd, resolve(cwd, folder.path))) {
      const which =
        resolve(cwd, folder.path) === cwd ? 'the working folder' : 'an ancestor of the working folder';
      return (
        `${named(folder)} is ${which}, which a run would move aside to put links to its generations there: ` +
        `give it a folder of its own${defaults(folder)}`
      );
    }
  }
  for (const [i, a] of folders.entries()) {
    for (const b of folders.slice(i + 1)) {
      const [pathA, pathB] = [resolve(cwd, a.path), resolve(cwd, b.path)];
      if (!isSameOrInside(pathA, pathB) && !isSameOrInside(pathB, pathA)) continue;
      // The same folder: said from the later option (`build --out site` against the default --published site).
      const same = pathA === pathB;
      const [inner, outer] = same || isSameOrInside(pathB, pathA) ? [b, a] : [a, b];
      if (!same && outer.holdsOthers) continue;
      const how = same ? 'the same folder as' : 'inside';
      return (
        `${named(inner)} is ${how} ${named(outer)}: give each its own folder, neither inside the other` +
        defaults(outer, inner)
      );
    }
  }
  return null;
}

type FolderSpec = Omit<FolderOption, 'path' | 'name'> & { key: string; flag: string };

const STATE: FolderSpec = { key: 'state', flag: '--state', linked: false, holdsOthers: true, usual: 'var' };

/**
 * A run's folders: `emi generate`, `emi schedule` and `emi up` (whose --dist is the build's output). A recording
 * (written by a live run, read by a replay) is never linked, but one inside a linked folder would be moved aside with
 * it or published with the site.
 */
const RUN_FOLDERS: readonly FolderSpec[] = [
  { key: 'out', flag: '--out', linked: true, usual: 'site' },
  { key: 'paid', flag: '--paid', linked: true, usual: 'paid' },
  STATE,
  { key: 'dist', flag: '--dist', linked: true, usual: 'dist' },
  { key: 'record', flag: '--record', linked: false },
  { key: 'replay', flag: '--replay', linked: false },
];

/**
 * The folder options of each command that writes published files. `emi build --state` is read by nothing (hidden),
 * and `--site` (the templates) is the repository's own site/, where `emi generate` run in a checkout publishes by
 * design: neither is checked.
 */
const COMMAND_FOLDERS: Readonly<Record<string, readonly FolderSpec[]>> = {
  generate: RUN_FOLDERS,
  schedule: RUN_FOLDERS,
  up: RUN_FOLDERS,
  build: [
    { key: 'published', flag: '--published', linked: false, usual: 'site' },
    { key: 'out', flag: '--out', linked: true, usual: 'dist' },
  ],
  backfill: [STATE, { key: 'out', flag: '--out', linked: true, usual: 'site' }],
};

/**
 * The folder options `command` (its path, e.g. `generate`) was given, from its parsed options; an option not given
 * and without a default (`emi generate` without --dist, `emi backfill --no-out`) is none. `stateFromEnv`: the state
 * folder is EMI_STATE_DIR's, not an option typed.
 */
export function commandFolders(
  command: string,
  opts: Readonly<Record<string, unknown>>,
  stateFromEnv: boolean,
): FolderOption[] {
  return (COMMAND_FOLDERS[command] ?? []).flatMap(({ key, flag, ...rest }) => {
    const path = opts[key];
    if (typeof path !== 'string') return [];
    const name = key === 'state' && stateFromEnv ? 'EMI_STATE_DIR' : flag;
    return [{ name, path, ...rest }];
  });
}
