'use strict';
// cpuprof record's preload, loaded into every Node process the recorded command starts
// (NODE_OPTIONS=--require) and into each of their worker threads. It profiles the thread with
// the inspector module in process and writes the profile when the thread ends: node 20 does not
// take --cpu-prof in NODE_OPTIONS, so this is how child processes get profiled too.
//
// Written into CPUPROF_RECORD_DIR as <pid>.<threadId>.cpuprofile (renamed into place when
// complete) beside <pid>.<threadId>.json, which says which process and thread it was.
//
// Signals: --cpu-prof and this preload write a profile only when the process exits; SIGINT,
// SIGTERM and SIGHUP would kill it first. A program that listens for the signal itself keeps
// its own behaviour; else the signal becomes process.exit(128 + signal), the exit status a
// shell reports for a process the signal killed.
//
// Worker threads: a worker still running when its process exits is stopped without an exit
// event of its own. So each worker leaves a marker file while it runs; at exit the main thread
// asks the workers (a BroadcastChannel) to write their profiles, and waits up to 2 s for their
// markers to go. A worker stuck in synchronous code cannot answer, and gives no profile.
(function cpuprofRecord() {
  const dir = process.env.CPUPROF_RECORD_DIR;
  if (!dir) return;
  const fs = require('fs');
  // A process that outlived the recording (a daemon the command left running) is not profiled.
  if (!fs.existsSync(dir)) return;
  let inspector;
  try {
    inspector = require('inspector');
  } catch {
    return; // a node built without the inspector
  }
  const path = require('path');
  const { isMainThread, threadId } = require('worker_threads');
  const interval = Number(process.env.CPUPROF_RECORD_INTERVAL_US) || 1000;
  const base = path.join(dir, `${process.pid}.${threadId}`);
  // That this process loaded the preload: when nothing is recorded, cpuprof tells a Node
  // process that wrote no profile from a command that started none with its NODE_OPTIONS.
  if (isMainThread) {
    try {
      fs.writeFileSync(`${base}.loaded`, '');
    } catch {}
  }
  if (process.env.CPUPROF_RECORD_SIGNALS_ONLY) {
    if (isMainThread) exitOnSignals();
    return;
  }
  const session = new inspector.Session();
  try {
    session.connect();
    session.post('Profiler.enable');
    session.post('Profiler.setSamplingInterval', { interval });
    session.post('Profiler.start');
  } catch {
    return;
  }
  const started = Date.now();
  let written = false;
  function writeProfile() {
    if (written) return;
    written = true;
    // An in-process session answers synchronously: the profile is written before post returns.
    session.post('Profiler.stop', (error, result) => {
      if (error || !result) return;
      const about = {
        pid: process.pid,
        ppid: process.ppid,
        threadId,
        argv: process.argv,
        execArgv: process.execArgv,
        startedMs: started,
      };
      try {
        fs.writeFileSync(`${base}.json`, JSON.stringify(about));
        fs.writeFileSync(`${base}.partial`, JSON.stringify(withoutPreload(result.profile)));
        fs.renameSync(`${base}.partial`, `${base}.cpuprofile`);
      } catch {
        // The recording is gone (or its disk full): the program ends as it would have.
      }
    });
    try {
      fs.unlinkSync(`${base}.live`);
    } catch {}
  }

  // The samples of this preload's own code (its start, and the stop in the exit handler, which
  // in a short process can be a good part of it) are not the program's: they are taken out,
  // each one's time given to the next sample kept, and the profile ends where the preload's
  // last run of samples begins.
  function withoutPreload(profile) {
    const byId = new Map(profile.nodes.map((node) => [node.id, node]));
    const urls = new Set([__filename, require('url').pathToFileURL(__filename).href]);
    const own = new Set();
    const pending = [[profile.nodes[0], false]];
    while (pending.length > 0) {
      const [node, under] = pending.pop();
      const mine = under || urls.has(node.callFrame.url);
      if (mine) own.add(node.id);
      for (const child of node.children || []) if (byId.has(child)) pending.push([byId.get(child), mine]);
    }
    const samples = [];
    const timeDeltas = [];
    let carried = 0;
    let time = profile.startTime;
    let ownSince = null;
    for (let i = 0; i < profile.samples.length; i++) {
      const delta = profile.timeDeltas[i] || 0;
      time += delta;
      carried += delta;
      if (own.has(profile.samples[i])) {
        if (ownSince === null) ownSince = time;
        continue;
      }
      ownSince = null;
      samples.push(profile.samples[i]);
      timeDeltas.push(carried);
      carried = 0;
    }
    const endTime = ownSince === null ? profile.endTime : Math.min(ownSince, profile.endTime);
    return { ...profile, endTime, samples, timeDeltas };
  }

  const channel = typeof BroadcastChannel === 'function' ? new BroadcastChannel(`cpuprof-record-${process.pid}`) : null;
  if (channel) channel.unref();
  if (!isMainThread) {
    fs.writeFileSync(`${base}.live`, '');
    if (channel) channel.onmessage = (message) => message.data === 'stop' && writeProfile();
    process.on('exit', writeProfile);
    return;
  }
  function workersLive() {
    const prefix = `${process.pid}.`;
    return fs.readdirSync(dir).some((name) => name.startsWith(prefix) && name.endsWith('.live'));
  }
  process.on('exit', () => {
    writeProfile();
    if (!channel || !workersLive()) return;
    channel.postMessage('stop');
    const sleep = new Int32Array(new SharedArrayBuffer(4));
    const until = Date.now() + 2000;
    while (workersLive() && Date.now() < until) Atomics.wait(sleep, 0, 0, 10);
  });
  exitOnSignals();

  function exitOnSignals() {
    for (const [signal, number] of [['SIGINT', 2], ['SIGTERM', 15], ['SIGHUP', 1]]) {
      process.on(signal, function cpuprofRecordSignal() {
        if (process.listenerCount(signal) > 1) return; // the program's own handler decides
        process.exit(128 + number);
      });
    }
  }
})();
