// What every Hono app of the worker answers to an exception none of its routes caught: the paywall, the vote app, the
// MCP route and the publishers' storefront and admin routes, on Node and in workerd. Hono's own answer is a text/plain
// 500 without CORS (a browser on another origin reads a network error) and a stack trace instead of a log line; this
// is one JSON line on stderr and the paywall's JSON error. A client that hung up mid-body is no error at all.
import type { ErrorHandler } from 'hono';
import { API_JSON_HEADERS } from '../schemas/delivery.ts';
import { isClientAbort } from './client-abort.ts';
import { errorBody } from './core/answers.ts';
import { logToStderr } from './core/log.ts';
import { describeError } from './facilitator-errors.ts';

type Log = typeof logToStderr;

const jsonError = (status: 400 | 500, error: string, message: string): Response =>
  new Response(JSON.stringify(errorBody(status, error, message, null)), {
    status,
    headers: API_JSON_HEADERS,
  });

/** An `onError` handler answering `message` (what could not handle the request) in a JSON 500, logged with `log`. */
export const answerUnhandled =
  (message: string, log: Log = logToStderr): ErrorHandler =>
  (error, c) => {
    if (isClientAbort(error)) return jsonError(400, 'bad_request', 'The request ended before its body did.');
    log({
      level: 'error',
      event: 'unhandled',
      method: c.req.method,
      path: c.req.path,
      detail: describeError(error),
    });
    return jsonError(500, 'internal_error', message);
  };
