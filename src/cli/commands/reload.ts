import { loadConfig } from '../../config/load.ts';
import { CommandRefusal, type Command } from '../command.ts';
import { pidFilePath, readPid } from '../pid-file.ts';

export const reload: Command = {
  name: 'reload',
  summary: "Reload a running gateway's configuration: SIGHUP to the pid in <dataDir>/gateway.pid, which `start` and `gateway` write.",
  flags: [],
  run(args) {
    const path = pidFilePath(loadConfig(args.config));
    const pid = readPid(path);
    if (pid === undefined)
      throw new CommandRefusal(
        `no gateway is running on this data directory (no pid in ${path}); start one with \`npm start\` or \`catalog-gateway gateway\`, or name its --data-dir`,
      );
    try {
      process.kill(pid, 'SIGHUP');
    } catch (err) {
      if ((err as { code?: unknown }).code !== 'ESRCH') throw err;
      throw new CommandRefusal(`the gateway of ${path} (pid ${String(pid)}) is not running; the file is left from a process that did not stop cleanly`);
    }
    process.stdout.write(
      `sent SIGHUP to the gateway, pid ${String(pid)} (${path}); its log says whether the configuration was reloaded or refused, and catalog_gateway_config_last_reload_successful on its /metrics\n`,
    );
    return Promise.resolve();
  },
};
