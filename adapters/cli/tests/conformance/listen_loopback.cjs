// Preloaded into the conformance suite (NODE_OPTIONS=--require): its mock servers call
// listen() without a host, which binds every interface; tests here may only use loopback, so
// host-less listen() calls get 127.0.0.1.
'use strict';
const net = require('net');
const dns = require('dns');
// With a host, listen() resolves it through dns.lookup, asynchronously, and the suite reads
// address().port right after listen(0): answer our literal at once so the bind stays synchronous.
const lookup = dns.lookup;
dns.lookup = function (hostname, options, callback) {
  if (hostname === '127.0.0.1') {
    const cb = typeof options === 'function' ? options : callback;
    const all = typeof options === 'object' && options !== null && options.all;
    return all ? cb(null, [{ address: hostname, family: 4 }]) : cb(null, hostname, 4);
  }
  return lookup.apply(this, arguments);
};
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const first = args[0];
  if (first !== null && typeof first === 'object' && !Array.isArray(first)) {
    if (first.host === undefined && first.path === undefined) {
      args[0] = { ...first, host: '127.0.0.1' };
    }
  } else if (first === undefined || typeof first === 'function') {
    args.unshift(0, '127.0.0.1');
  } else if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    if (typeof args[1] !== 'string') {
      args.splice(1, 0, '127.0.0.1');
    }
  }
  return listen.apply(this, args);
};
