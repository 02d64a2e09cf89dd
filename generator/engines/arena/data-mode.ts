// Which rounds a run may publish as its own record: only those whose brain call was recorded in the run's data
// mode. A simulated round is never shown as a live or replay record, and a live round never inside a simulated one.
import type { DataMode } from '../../../schemas/common.ts';

/** The data mode a call was recorded in; null when it was recorded before the store kept it (unknown). */
export type RecordedMode = DataMode | null;

/** Unknown counts as simulated, the generator's default mode: never as a live or replay record. */
export const ownsRound = (recorded: RecordedMode, mode: DataMode): boolean =>
  recorded === mode || (recorded === null && mode === 'simulated');

/** Resolved rounds of the reporting window left out because their calls were recorded in another data mode. */
export interface LeftOut {
  rounds: number;
  /** Of those, rounds where the brain made a call (what a track record would have scored). */
  withCall: number;
  /** Their modes, sorted, null (unknown) last. */
  modes: RecordedMode[];
}

export const NOTHING_LEFT_OUT: LeftOut = { rounds: 0, withCall: 0, modes: [] };

const modeName = (m: RecordedMode): string => m ?? 'unknown';

/** "simulated", "simulated or unknown": an unknown mode means recorded before the store kept data modes. */
const modeList = (modes: RecordedMode[]): string => {
  const words = modes.map(modeName);
  return words.length <= 1 ? (words[0] ?? '') : `${words.slice(0, -1).join(', ')} or ${words.at(-1)!}`;
};

/** One sentence saying what was left out and why, or '' when nothing was. */
export const leftOutSentence = (n: number, modes: RecordedMode[], mode: DataMode): string =>
  n === 0
    ? ''
    : ` ${n} resolved ${n === 1 ? 'round' : 'rounds'} of the window recorded in ${modeList(modes)} mode ` +
      `${n === 1 ? 'is' : 'are'} left out: this record counts ${mode} rounds only` +
      (modes.includes(null) ? ' (unknown: recorded before the store kept data modes).' : '.');
