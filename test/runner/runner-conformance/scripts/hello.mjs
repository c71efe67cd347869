import { readFileSync } from "node:fs";
console.log(JSON.stringify({ got: JSON.parse(process.argv[2]), stdin: readFileSync(0, "utf8") === process.argv[2] }));
