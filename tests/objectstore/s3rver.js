// Starts s3rver's command line (the @20minutes/s3rver package ships its CLI
// module but no executable); NODE_PATH points at the installed node_modules.
require('@20minutes/s3rver/lib/cli').parseAsync(process.argv);
