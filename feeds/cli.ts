// `npm run feed -- the-odds-api [flags]` and `npm run feed -- ndjson FILE|- [flags]`
// (`npm run feed -- --help` lists every option): the process around cliMain.ts.
import { runFeedCli } from './cliMain.ts';

const code = await runFeedCli(process.argv.slice(2), process.env, {
  write: (text) => process.stderr.write(text),
  out: (text) => process.stdout.write(text),
  tty: process.stderr.isTTY === true,
  onStop: (stop) => {
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  },
});
process.exitCode = code;
