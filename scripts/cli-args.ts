// Small helpers shared by the operator scripts: a checked port option and one clean shutdown on Ctrl-C or SIGTERM.

export function portOption(text: string): number {
  const port = Number(text);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    console.error(`--port must be a port number (1-65535): ${JSON.stringify(text)}`);
    process.exit(2);
  }
  return port;
}

/** Runs `stop` once on SIGINT or SIGTERM, then exits (0, or 1 if stopping failed). */
export function onShutdown(stop: () => Promise<void>): void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: stopping`);
    stop().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
}
