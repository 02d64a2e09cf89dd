// Polls a local host runtime (nginx, wrangler, netlify dev) until it answers HTTP, for as long as `keepWaiting`
// says its process may still come up. True once it answers; false when the process gave up or time ran out.
export async function waitUntilServing(
  url: string,
  keepWaiting: () => boolean,
  timeoutMs: number,
  intervalMs = 100,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (keepWaiting() && Date.now() < deadline) {
    try {
      await fetch(url);
      return true;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  }
  return false;
}
