// Settings for a process that runs once and ends (`emi generate`, `emi build`), as opposed to `emi schedule`/`emi up`.
import * as z from 'zod';

/**
 * zod checks each published file once in such a process, which is about three times faster without first generating
 * a parser per schema (`jitless`). Venue answers of many rows keep their compiled parsers (`compiledOnFirstUse`, an
 * explicit `z.compile` that jitless does not turn off); a long-running process keeps zod's default. Call it before
 * any module that makes a schema is loaded: zod reads the setting when a schema is made, not when it parses.
 */
export function configureOneShotProcess(): void {
  z.config({ jitless: true });
}
