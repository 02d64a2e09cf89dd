// Preloaded (node --import) into a process a test runs: at exit, its peak resident memory in KB goes to the file
// named by EMI_TEST_PEAK_RSS_FILE.
import { writeFileSync } from 'node:fs';

process.on('exit', () => {
  const file = process.env.EMI_TEST_PEAK_RSS_FILE;
  if (file) writeFileSync(file, String(process.resourceUsage().maxRSS));
});
