// Facts about each venue that both the adapters and the simulator need: where it lives and how it names things.

export type VenueId = 'binance-spot' | 'binance-usdm' | 'okx';

/** Base URL of each venue's public REST API (live transports and the simulator route on these origins). */
export const VENUE_BASE_URLS: Readonly<Record<VenueId, string>> = {
  'binance-spot': 'https://api.binance.com',
  'binance-usdm': 'https://fapi.binance.com',
  okx: 'https://www.okx.com',
};

/** Binance spot and USDⓈ-M name a USDT market by concatenation: BTC -> BTCUSDT. */
export const binanceSymbol = (symbol: string): string => `${symbol}USDT`;

/** OKX names the underlying of a USDT swap with a dash: BTC -> BTC-USDT (the instrument is BTC-USDT-SWAP). */
export const okxUnderlying = (symbol: string): string => `${symbol}-USDT`;

/**
 * Coins per contract of OKX's USDT swaps (the instruments endpoint's `ctVal`), needed because OKX reports
 * liquidation sizes in contracts. Values as listed by OKX for these swaps; a live deployment should refresh them
 * from `/api/v5/public/instruments?instType=SWAP`. Any other coin (the synthetic benchmark symbols) counts 1 coin.
 */
const OKX_CONTRACT_VALUES: Readonly<Record<string, number>> = {
  BTC: 0.01,
  ETH: 0.1,
  XRP: 100,
  SOL: 1,
  ALGO: 10,
  XLM: 100,
  HBAR: 100,
};

export const okxContractValue = (symbol: string): number => OKX_CONTRACT_VALUES[symbol] ?? 1;
