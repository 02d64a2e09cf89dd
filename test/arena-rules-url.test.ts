// Every published body with crowd figures links to the arena rules that define them (`rules_url`): the tie that
// makes a crowd's consensus NONE, the reference price an outcome is measured from, the vote window. Checked on every
// JSON body of a simulated site after two hourly runs, the second resolving the round of the first, so that the teacher
// lessons hold lessons (each with its human_consensus, crowd_correct and actual_outcome).
import { readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DOCS_PATHS } from '../generator/discovery/docs-paths.ts';
import { publishSimulatedRuns } from './site-fixture.ts';
import { jsonFiles } from './helpers/json-files.ts';
import { tempDir } from './helpers/temp-dir.ts';

// Inside the round's entry window, so that the call is recorded and the next hour's run resolves the round.
const FIRST_RUN = Date.parse('2026-11-20T12:05:00Z');
const HOUR = 3_600_000;

/**
 * The history table of statistics (crowd_n, crowd_hit_rate, ...) holds rows, not figures with a rule of their own:
 * each file names its `source_path`, the statistics body, which links the rules. Checked below rather than linked.
 */
const linkedThroughSource = (name: string): boolean => /^site\/api\/history\/[^/]+\/[^/]+\.json$/.test(name);

/** Every property name anywhere in a JSON value. */
function keysIn(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const item of value) keysIn(item, into);
  else if (typeof value === 'object' && value !== null) {
    for (const [key, inner] of Object.entries(value)) {
      into.add(key);
      keysIn(inner, into);
    }
  }
  return into;
}

const isCrowdFigure = (key: string) => key === 'human_consensus' || key.startsWith('crowd_');

describe('rules_url on every body with crowd figures', () => {
  let root: string;
  beforeAll(async () => {
    root = await tempDir('emi-rules-url-');
    await publishSimulatedRuns(root, [FIRST_RUN, FIRST_RUN + HOUR]);
  }, 60_000);

  it('the teacher lessons link to the arena rules, and hold lessons whose figures the rules define', async () => {
    const body = JSON.parse(await readFile(join(root, 'site', 'api', 'teacher-lessons.php'), 'utf8')) as {
      rules_url?: unknown;
      latest_lessons: Record<string, unknown>[];
    };
    expect(body.rules_url).toBe(DOCS_PATHS.arenaRules);
    expect(body.latest_lessons.length).toBeGreaterThan(0);
    for (const lesson of body.latest_lessons) {
      expect(Object.keys(lesson)).toEqual(
        expect.arrayContaining(['human_consensus', 'crowd_correct', 'actual_outcome']),
      );
    }
  });

  it('every free and paid body holding human_consensus or a crowd_ field holds a rules_url to the rules page', async () => {
    const files = [...(await jsonFiles(join(root, 'site'))), ...(await jsonFiles(join(root, 'paid')))];
    const withCrowd: string[] = [];
    const unlinked: string[] = [];
    for (const file of files) {
      const body = JSON.parse(await readFile(file, 'utf8')) as { rules_url?: unknown; source_path?: string };
      if (![...keysIn(body)].some(isCrowdFigure)) continue;
      const name = relative(root, file);
      withCrowd.push(name);
      const linked = linkedThroughSource(name)
        ? (
            JSON.parse(await readFile(join(root, 'site', body.source_path ?? ''), 'utf8')) as {
              rules_url?: unknown;
            }
          ).rules_url
        : body.rules_url;
      if (linked !== DOCS_PATHS.arenaRules) unlinked.push(name);
    }
    // The walk finds the arena bodies (free) at least: otherwise it checks nothing.
    expect(withCrowd).toEqual(
      expect.arrayContaining([
        'site/api/human-consensus.php',
        'site/api/teacher-lessons.php',
        'site/arena/get_shared_intelligence.php',
      ]),
    );
    expect(withCrowd).toContain('site/api/statistics.php');
    expect(unlinked).toEqual([]);
  });
});
