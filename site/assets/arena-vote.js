// The arena page's vote form: builds the text to sign for the asset's next round, posts the signed vote to
// POST /arena/vote on this origin, and scores this browser's past votes against the published teacher lessons.
// Kept apart from the buyer page code; no dependency, no account: past votes live in localStorage only.
const ASSETS = ['BTC', 'ETH', 'XRP', 'SOL', 'ALGO', 'XLM', 'HBAR'];
const HOUR = 3_600_000;
const GRACE_MS = 60_000;
const STORAGE_KEY = 'emi-arena-votes';

const root = document.getElementById('arena-vote');
const $ = (id) => document.getElementById(id);

const pad = (n) => String(n).padStart(2, '0');
const roundId = (asset, start) => {
  const d = new Date(start);
  return `${asset}-${d.getUTCFullYear()}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}T${pad(d.getUTCHours())}Z`;
};

/** The asset's round that still takes votes: the open one within its grace period, else the next one. */
const votingRound = (asset, now = Date.now()) => {
  const first = Math.floor((now - GRACE_MS) / HOUR) + 1;
  for (let k = first; k < first + 7; k++) {
    if (ASSETS[k % 7] === asset) return { id: roundId(asset, k * HOUR), start: k * HOUR };
  }
  return null;
};

const nonce = () => {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
};

let current = null;
const site = () => new URL(root.dataset.site || location.origin).origin;

const refreshMessage = () => {
  const asset = $('arena-asset').value;
  const round = votingRound(asset);
  current = {
    asset,
    prediction: $('arena-prediction').value,
    round: round.id,
    text: [
      'emi-arena-vote/v1',
      `site:${site()}`,
      `asset:${asset}`,
      `prediction:${$('arena-prediction').value}`,
      `round:${round.id}`,
      `nonce:${nonce()}`,
    ].join('\n'),
  };
  $('arena-message').textContent = current.text;
};

const history = () => JSON.parse(localStorage.getItem(STORAGE_KEY) || '[]');

const showHistory = async () => {
  const votes = history();
  let lessons = [];
  try {
    const res = await fetch(new URL('/api/teacher-lessons.php', location.origin));
    if (res.ok) lessons = (await res.json()).latest_lessons || [];
  } catch {
    // Offline or not yet published: votes are shown without outcomes.
  }
  const outcome = new Map(lessons.map((l) => [l.round_id, l.actual_outcome]));
  const body = $('arena-history').querySelector('tbody');
  body.replaceChildren();
  let right = 0;
  let scored = 0;
  for (const v of votes) {
    const o = outcome.get(v.round) || null;
    if (o) {
      scored += 1;
      if (o === v.prediction) right += 1;
    }
    const row = document.createElement('tr');
    for (const text of [
      v.round,
      v.prediction,
      o || 'not resolved yet',
      o ? (o === v.prediction ? 'yes' : 'no') : '',
    ]) {
      const cell = document.createElement('td');
      cell.textContent = text;
      row.append(cell);
    }
    body.append(row);
  }
  $('arena-score').textContent = scored
    ? `${right} of ${scored} resolved votes right (scored from the published lessons of the latest rounds).`
    : 'No resolved vote yet.';
};

const send = async () => {
  const result = $('arena-result');
  const payload = {
    form: 'data',
    address: $('arena-address').value.trim(),
    message: current.text,
    signature: $('arena-signature').value.trim(),
  };
  try {
    const res = await fetch(new URL('/arena/vote', location.origin), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(payload),
    });
    const answer = await res.json();
    if (res.ok) {
      localStorage.setItem(
        STORAGE_KEY,
        JSON.stringify([...history(), { round: answer.round_id, prediction: answer.prediction }]),
      );
      result.textContent = `Vote received for ${answer.round_id}. ${answer.note}`;
      refreshMessage();
      showHistory();
    } else {
      result.textContent = `Refused (${answer.error}): ${answer.message}`;
    }
  } catch {
    result.textContent = 'The vote endpoint could not be reached on this site.';
  }
};

if (root) {
  $('arena-asset').addEventListener('change', refreshMessage);
  $('arena-prediction').addEventListener('change', refreshMessage);
  $('arena-send').addEventListener('click', send);
  refreshMessage();
  showHistory();
}
