'use strict';
// Where this package's libtritonserver.so is: the prebuilt one for this
// platform (prebuilds/<platform>-<arch>/), else the one a build from source
// left in build/fake. triton-node finds this package by name
// (require.resolve('@triton-node/fake-engine')), as its optional dependency.
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const FILE = 'libtritonserver.so';

function candidates() {
  return [
    join(__dirname, 'build', 'fake', FILE),
    join(__dirname, 'prebuilds', `${process.platform}-${process.arch}`, FILE),
  ];
}

/** The library to pass as `library` to Server.create(); the first candidate that exists, else the build path. */
function libraryPath() {
  const all = candidates();
  return all.find((p) => existsSync(p)) ?? all[0];
}

exports.candidates = candidates;
exports.findLibrary = libraryPath;
/** The library as found when this module loaded (findLibrary() looks again). */
exports.libraryPath = libraryPath();
/** The version of Triton's C API the library implements. */
exports.apiVersion = { major: 1, minor: 34 };
