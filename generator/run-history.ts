// A short rolling history of runs (regime and per-coin readings) that feeds the docs' charts.
import { readFile } from 'node:fs/promises';
import type { FreeSnapshots } from './engines/index.ts';

export const HISTORY_LIMIT = 200;

export interface RunHistoryEntry {
  generated_at: string;
  mode: string;
  market_mode: string;
  market_state: string;
  confidence: number;
  risk_score: number | null;
  coins: Record<string, { price: number | null; confidence: number | null; bias: string | null }>;
}

export function historyEntryOf(free: FreeSnapshots): RunHistoryEntry {
  const { marketRegime, mainBrain } = free;
  return {
    generated_at: marketRegime.updated,
    mode: marketRegime.source.mode,
    market_mode: marketRegime.market_mode,
    market_state: marketRegime.market_state,
    confidence: marketRegime.confidence,
    risk_score: marketRegime.regime.risk_score,
    coins: Object.fromEntries(
      Object.entries(mainBrain.coins).map(([symbol, coin]) => [
        symbol,
        { price: coin.price, confidence: coin.confidence, bias: coin.bias },
      ]),
    ),
  };
}

async function readHistory(file: string): Promise<RunHistoryEntry[]> {
  try {
    const parsed = JSON.parse(await readFile(file, 'utf8')) as { runs?: RunHistoryEntry[] };
    return Array.isArray(parsed.runs) ? parsed.runs : [];
  } catch {
    return []; // a missing or damaged history only costs the charts their past, never a run
  }
}

/** The history file's new text with this run added (an entry with the same time is replaced, not duplicated). */
export async function runHistoryWith(file: string, free: FreeSnapshots): Promise<string> {
  const entry = historyEntryOf(free);
  const runs = (await readHistory(file)).filter((run) => run.generated_at !== entry.generated_at);
  runs.push(entry);
  runs.sort((a, b) => a.generated_at.localeCompare(b.generated_at));
  return `${JSON.stringify({ runs: runs.slice(-HISTORY_LIMIT) }, null, 2)}\n`;
}
