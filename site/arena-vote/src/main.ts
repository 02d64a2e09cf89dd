// The arena page's vote form: connect a wallet (Pera, Defly, or a throwaway key on the local stack), sign the
// vote for the asset's next round, post it to POST /arena/vote on this origin, and score this browser's past
// votes against the published teacher lessons. No account: past votes live in this browser's localStorage.
import { roundFromId, votingRoundFor } from '../../../generator/engines/arena/rules.ts';
import { formatVoteMessage } from '../../../paywall-worker/arena-vote/message.ts';
import type { VoteBody, VoteWallet, VoteWalletKind } from './vote-wallets.ts';

const STORAGE_KEY = 'emi-arena-votes';
/**
 * How many lessons /api/teacher-lessons.php lists, newest first (LATEST_LESSONS of generator/engines/arena/bodies.ts,
 * not imported: it would bring the schemas into this small script). An older vote is never scored here.
 */
const LATEST_LESSONS = 20;
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

interface KeptVote {
  address: string;
  round: string;
  prediction: string;
}

const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;
const value = (id: string) => $<HTMLInputElement | HTMLSelectElement>(id).value.trim();

const root = $('arena-vote');
let wallet: VoteWallet | null = null;
let text = '';

const site = () => new URL(root.dataset.site || location.origin).origin;

const nonce = () =>
  Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');

function refreshMessage(): void {
  const asset = value('arena-asset');
  const round = votingRoundFor(asset, Date.now());
  if (!round) return;
  const prediction = value('arena-prediction') as 'BULLISH' | 'BEARISH' | 'NEUTRAL';
  text = formatVoteMessage({ site: site(), asset, prediction, roundId: round.id, nonce: nonce() });
  $('arena-message').textContent = text;
}

const keptVotes = (): KeptVote[] => {
  try {
    const kept: unknown = JSON.parse(localStorage.getItem(STORAGE_KEY) || '[]');
    return Array.isArray(kept) ? (kept as KeptVote[]) : [];
  } catch {
    return [];
  }
};

/** The outcome cell of a vote the lessons read do not score: why, as far as this page can tell. */
const unscoredText = (roundId: string, lessonsRead: boolean, now: number): string => {
  if ((roundFromId(roundId)?.end ?? 0) > now) return 'round not over yet';
  return lessonsRead
    ? `not among the latest ${LATEST_LESSONS} lessons: resolved or not, it is outside what this page reads`
    : 'the lessons could not be read';
};

async function showHistory(): Promise<void> {
  const address = wallet?.address;
  const votes = keptVotes().filter((v) => !address || v.address === address);
  let lessons: { round_id: string; actual_outcome: string }[] = [];
  let lessonsRead = false;
  try {
    const res = await fetch(new URL('/api/teacher-lessons.php', location.origin));
    if (res.ok) {
      lessons = ((await res.json()) as { latest_lessons?: typeof lessons }).latest_lessons ?? [];
      lessonsRead = true;
    }
  } catch {
    // Offline or not yet published: votes are shown without outcomes.
  }
  const outcome = new Map(lessons.map((l) => [l.round_id, l.actual_outcome]));
  const now = Date.now();
  const rows = votes.map((v) => {
    const o = outcome.get(v.round);
    const row = document.createElement('tr');
    for (const cell of [
      v.round,
      v.prediction,
      o ?? unscoredText(v.round, lessonsRead, now),
      o ? (o === v.prediction ? 'yes' : 'no') : '',
    ]) {
      const td = document.createElement('td');
      td.textContent = cell;
      row.append(td);
    }
    return { row, scored: o !== undefined, right: o === v.prediction };
  });
  $('arena-history')
    .querySelector('tbody')!
    .replaceChildren(...rows.map((r) => r.row));
  const scored = rows.filter((r) => r.scored).length;
  const right = rows.filter((r) => r.scored && r.right).length;
  $('arena-score').textContent = scored
    ? `${right} of ${scored} resolved votes right (scored from the latest ${LATEST_LESSONS} published lessons only).`
    : votes.length
      ? `None of your votes is among the latest ${LATEST_LESSONS} published lessons, the only ones this page scores.`
      : 'No vote from this browser yet.';
}

async function post(body: VoteBody): Promise<void> {
  const result = $('arena-result');
  let res: Response;
  try {
    res = await fetch(new URL('/arena/vote', location.origin), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  } catch {
    result.textContent = 'The vote endpoint could not be reached on this site.';
    return;
  }
  const answer = (await res.json().catch(() => ({}))) as Record<string, string>;
  if (!res.ok) {
    result.textContent = `Refused (${answer.error ?? res.status}): ${answer.message ?? 'no reason given'}`;
    return;
  }
  const address = body.form === 'data' ? body.address : (wallet?.address ?? '');
  const kept = [...keptVotes(), { address, round: answer.round_id!, prediction: answer.prediction! }];
  localStorage.setItem(STORAGE_KEY, JSON.stringify(kept));
  result.textContent = `Vote received for ${answer.round_id}. ${answer.note ?? ''}`;
  refreshMessage();
  await showHistory();
}

async function connect(kind: VoteWalletKind): Promise<void> {
  const status = $('arena-wallet');
  status.textContent = 'Connecting…';
  try {
    await wallet?.disconnect();
    // Loaded on the first click: algosdk and the wallet SDKs are most of the page's weight.
    const { connectVoteWallet } = await import('./vote-wallets.ts');
    wallet = await connectVoteWallet(kind);
    status.textContent = `Connected: ${wallet.label}, ${wallet.address}`;
    $<HTMLButtonElement>('arena-sign').disabled = false;
  } catch (error) {
    wallet = null;
    status.textContent = (error as Error).message;
    $<HTMLButtonElement>('arena-sign').disabled = true;
  }
  await showHistory();
}

async function signAndSend(): Promise<void> {
  if (!wallet) return;
  $('arena-result').textContent = `Waiting for ${wallet.label} to sign…`;
  try {
    await post(await wallet.signVote(text));
  } catch (error) {
    $('arena-result').textContent = (error as Error).message;
  }
}

/** The controls the page ships disabled (and the vote text hidden), so that none looks usable before this runs. */
const CONTROLS_WIRED_AT_START = [
  'arena-connect-pera',
  'arena-connect-defly',
  'arena-connect-local',
  'arena-address',
  'arena-signature',
  'arena-send',
];

function markReady(): void {
  for (const id of CONTROLS_WIRED_AT_START) $<HTMLButtonElement | HTMLInputElement>(id).disabled = false;
  $('arena-message-block').hidden = false;
}

const sendPasted = () =>
  post({ form: 'data', address: value('arena-address'), message: text, signature: value('arena-signature') });

if (root) {
  // A throwaway key is offered only on this machine's local stack: elsewhere it would mint voters for free.
  $('arena-connect-local').hidden = !LOOPBACK.has(location.hostname);
  $('arena-asset').addEventListener('change', refreshMessage);
  $('arena-prediction').addEventListener('change', refreshMessage);
  $('arena-connect-pera').addEventListener('click', () => void connect('pera'));
  $('arena-connect-defly').addEventListener('click', () => void connect('defly'));
  $('arena-connect-local').addEventListener('click', () => void connect('local-key'));
  $('arena-sign').addEventListener('click', () => void signAndSend());
  $('arena-send').addEventListener('click', () => void sendPasted());
  refreshMessage();
  markReady();
  void showHistory();
}
