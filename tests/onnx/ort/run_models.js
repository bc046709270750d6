// Runs every model tests/onnx/ort/export_models wrote with ONNX Runtime (the npm package
// onnxruntime-node) and compares with xtrace's outputs: integers and bools exactly, floats
// within a tolerance (the two libraries' transcendentals and summation orders differ).
//   node run_models.js <folder>
// Exits 77 (skipped) when onnxruntime-node cannot be loaded, saying why.
'use strict';
const fs = require('fs');
const path = require('path');

let ort;
try {
    ort = require('onnxruntime-node');
} catch (e) {
    console.log('SKIPPED: onnxruntime-node cannot be loaded (' + e.message.split('\n')[0] +
                '); scripts/test.sh installs it with npm');
    process.exit(77);
}

const types = {float32: 'float32', float64: 'float64', int32: 'int32', int64: 'int64', bool: 'bool'};
const arrays = {
    float32: Float32Array, float64: Float64Array, int32: Int32Array, int64: BigInt64Array,
    bool: Uint8Array,
};

function tensor(a) {
    const data = a.type === 'int64' ? a.data.map((v) => BigInt(v))
               : a.type === 'int32' ? a.data.map((v) => Number(v))
               : a.type === 'bool' ? a.data.map((v) => (v ? 1 : 0)) : a.data;
    return new ort.Tensor(types[a.type], arrays[a.type].from(data), a.dims);
}

function compare(model, want, got) {
    const where = model + ' output ' + want.name;
    if (JSON.stringify(Array.from(got.dims)) !== JSON.stringify(want.dims))
        return where + ': dims ' + JSON.stringify(Array.from(got.dims)) + ', xtrace ' +
               JSON.stringify(want.dims);
    if (got.type !== types[want.type])
        return where + ': type ' + got.type + ', xtrace ' + want.type;
    for (let i = 0; i < want.data.length; ++i) {
        const g = got.data[i], w = want.data[i];
        if (want.type === 'bool') {
            if (Boolean(g) !== w) return where + '[' + i + ']: ' + g + ', xtrace ' + w;
        } else if (want.type === 'int32' || want.type === 'int64') {
            if (BigInt(g) !== BigInt(w)) return where + '[' + i + ']: ' + g + ', xtrace ' + w;
        } else {
            const tol = (want.type === 'float32' ? 2e-5 : 1e-9) * (1 + Math.abs(w));
            if (!(Math.abs(g - w) <= tol)) return where + '[' + i + ']: ' + g + ', xtrace ' + w;
        }
    }
    return null;
}

async function main() {
    const dir = process.argv[2];
    const models = fs.readdirSync(dir).filter((f) => f.endsWith('.onnx')).sort();
    if (models.length === 0) {
        console.log('no models in ' + dir);
        process.exit(1);
    }
    let failures = 0;
    for (const file of models) {
        const name = file.slice(0, -5);
        const io = JSON.parse(fs.readFileSync(path.join(dir, name + '.json'), 'utf8'));
        try {
            const session = await ort.InferenceSession.create(path.join(dir, file));
            const feeds = {};
            for (const a of io.inputs) feeds[a.name] = tensor(a);
            const results = await session.run(feeds);
            for (const want of io.outputs) {
                const why = compare(name, want, results[want.name]);
                if (why) {
                    console.log('MISMATCH ' + why);
                    ++failures;
                }
            }
            console.log('ok ' + name + ' (' + io.outputs.length + ' outputs)');
        } catch (e) {
            console.log('FAILED ' + name + ': ' + e.message);
            ++failures;
        }
    }
    console.log(models.length + ' models, ' + failures + ' failures (onnxruntime ' +
                ort.env.versions.common + ')');
    process.exit(failures ? 1 : 0);
}

main();
