// Runs a job on a cron expression with node-cron: never two at once, and stopping waits for the run in flight.
import cron from 'node-cron';
import type { Logger } from 'node-cron';

export { DEFAULT_CRON } from './defaults.ts';

export interface Schedule {
  /** Stops firing, then resolves once the run in flight (if any) has finished. */
  stop(): Promise<void>;
}

export function assertCronExpression(expression: string): void {
  if (!cron.validate(expression)) throw new Error(`"${expression}" is not a valid cron expression.`);
}

/**
 * node-cron's own messages as plain lines: its default logger adds a timestamp, its PID and ANSI colours. Its two
 * warnings are said by the schedule instead (a tick skipped while a run is in flight: `onSkip`; a tick missed: the
 * `execution:missed` listener), its errors keep their text.
 */
const plainLogger: Logger = {
  info: () => {},
  debug: () => {},
  warn: () => {},
  error: (message, error) => {
    const text = message instanceof Error ? message.message : message;
    console.error(`emi: node-cron: ${text}${error ? `: ${error.message}` : ''}`);
  },
};

export function startSchedule(
  expression: string,
  job: () => Promise<void>,
  onSkip: () => void = () => {},
): Schedule {
  assertCronExpression(expression);
  let inFlight: Promise<void> | null = null;
  const task = cron.schedule(
    expression,
    async () => {
      if (inFlight) return onSkip(); // belt and braces beside noOverlap: a slow run is never doubled
      inFlight = job().finally(() => {
        inFlight = null;
      });
      await inFlight;
    },
    { noOverlap: true, name: 'emi-generate', logger: plainLogger },
  );
  task.on('execution:overlap', () => onSkip());
  // node-cron warns of a missed tick unless someone listens: one plain line instead.
  task.on('execution:missed', ({ date }) =>
    console.log(`the tick of ${date.toISOString()} was missed (this process was busy): the next one runs`),
  );
  return {
    async stop() {
      await task.stop();
      await task.destroy();
      await inFlight;
    },
  };
}
