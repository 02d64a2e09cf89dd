// The one door through which raw venue bytes enter the generator: live HTTP, a replay folder or the simulator.
export interface TransportRequest {
  url: string; // absolute URL, query string included
  method?: 'GET' | 'POST';
  body?: string; // JSON for POST venues (Hyperliquid)
}

export interface TransportResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /**
   * The body already parsed, when the transport built the answer as a value (the simulator): exactly
   * `JSON.parse(body)`, so readers may skip parsing it.
   */
  json?: unknown;
}

export interface Transport {
  readonly mode: 'simulated' | 'live' | 'replay';
  /**
   * The instant every answer describes, when it is fixed: a recording's as-of, the simulator's clock. Absent for live
   * answers, which describe the moment of their call (a live run's as-of is the current minute).
   */
  readonly answersAt?: number;
  fetch(request: TransportRequest, signal?: AbortSignal): Promise<TransportResponse>;
}
