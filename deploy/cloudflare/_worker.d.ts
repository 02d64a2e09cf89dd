// Types of _worker.js for the tests that import it (the worker itself is plain JavaScript for Pages).
export interface PagesEnv {
  ASSETS: { fetch(request: Request): Promise<Response> };
  PAYWALL_ORIGIN?: string;
}
export const TRACKED_ASSETS: string[];
export const PAID_PATHS: string[];
export const INVALID_ASSET: Record<string, unknown>;
export const NOT_FOUND: Record<string, unknown>;
declare const worker: { fetch(request: Request, env: PagesEnv): Promise<Response> };
export default worker;
