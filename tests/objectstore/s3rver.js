// Starts s3rver's command line (the @20minutes/s3rver package ships its CLI
// module but no executable); NODE_PATH points at the installed node_modules.
//
// With S3RVER_KEYS_FILE, the access keys s3rver accepts follow that file:
// a first line "generation N", then one "<access key> <secret>" per line.
// Keys it no longer lists are revoked (requests signed with them answer 403
// InvalidAccessKeyId). Once a generation is applied, "N" is written to
// <file>.applied, so that a test knows a revocation holds before it goes on.
'use strict';
const fs = require('fs');
const AWSAccount = require('@20minutes/s3rver/lib/models/account');

const keysFile = process.env.S3RVER_KEYS_FILE;
if (keysFile) {
  let applied = '';
  const sync = () => {
    let text;
    try {
      text = fs.readFileSync(keysFile, 'utf8');
    } catch (error) {
      return;
    }
    const lines = text.split('\n').filter((line) => line.trim() !== '');
    const generation = (lines.shift() || '').replace(/^generation /, '');
    if (generation === applied) return;
    const wanted = new Map(lines.map((line) => line.trim().split(/\s+/)));
    const account = AWSAccount.DUMMY_ACCOUNT;
    for (const id of [...account.accessKeys.keys()]) {
      if (!wanted.has(id)) account.revokeAccessKey(id);
    }
    for (const [id, secret] of wanted) account.createKeyPair(id, secret);
    fs.writeFileSync(keysFile + '.applied.tmp', generation);
    fs.renameSync(keysFile + '.applied.tmp', keysFile + '.applied');
    applied = generation;
  };
  sync();
  setInterval(sync, 50).unref();
}

require('@20minutes/s3rver/lib/cli').parseAsync(process.argv);
