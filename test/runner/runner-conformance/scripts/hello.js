console.log(JSON.stringify({ got: JSON.parse(process.argv[2]), stdin: require("fs").readFileSync(0, "utf8") === process.argv[2] }));
