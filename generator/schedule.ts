// Runs a job on a cron expression with node-cron: never two at once, and stopping waits for the run in flight.
import cron from 'node-cron';

export { DEFAULT_CRON } from './defaults.ts';

export interface Schedule {
  /** Stops firing, then resolves once the run in flight (if any) has finished. */
  stop(): Promise<void>;
}

export function assertCronExpression(expression: string): void {
  if (!cron.validate(expression)) throw new Error(`"${expression}" is not a valid cron expression.`);
}

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
    { noOverlap: true, name: 'emi-generate' },
  );
  task.on('execution:overlap', () => onSkip());
  return {
    async stop() {
      await task.stop();
      await task.destroy();
      await inFlight;
    },
  };
}
