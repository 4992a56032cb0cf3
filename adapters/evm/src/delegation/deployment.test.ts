import { expect } from 'chai';
import { AbiCoder, Wallet, getAddress, getCreate2Address, keccak256 } from 'ethers';
import { BATCH_SWEEPER_ARTIFACT, DEPOSIT_FORWARDER_ARTIFACT } from './artifacts';
import { CREATE2_DEPLOYER, DEPLOYMENT_SALT, batchSweeperDeployment, forwarderDeployment } from './deployment';

type AbiItem = { type: string; name?: string; stateMutability?: string };

/**
 * The opcodes of runtime code, PUSH data skipped, the CBOR metadata solc appends left out (its
 * length is the code's last two bytes).
 */
function opcodes(runtimeHex: string): number[] {
  const code = Buffer.from(runtimeHex.slice(2), 'hex');
  const metadataLength = code.readUInt16BE(code.length - 2) + 2;
  const end = code.length - metadataLength;
  const ops: number[] = [];
  for (let pc = 0; pc < end; pc++) {
    const op = code[pc]!;
    ops.push(op);
    if (op >= 0x60 && op <= 0x7f) pc += op - 0x5f;
  }
  return ops;
}

describe('delegation: deterministic deployment (pure)', () => {
  it('CREATE2_DEPLOYER is the Arachnid proxy, EIP-55', () => {
    expect(CREATE2_DEPLOYER).to.equal(getAddress('0x4e59b44847b379578588920ca78fbf26c0b4956c'));
    expect(DEPLOYMENT_SALT).to.match(/^0x0{64}$/);
  });

  it('forwarder address = CREATE2(deployer, salt, keccak(creation code || abi.encode(collector))), as ethers computes it', () => {
    const collector = Wallet.createRandom().address;
    const d = forwarderDeployment(collector);
    const expectedInit = DEPOSIT_FORWARDER_ARTIFACT.bytecode + AbiCoder.defaultAbiCoder().encode(['address'], [collector]).slice(2);
    expect(d.initCode).to.equal(expectedInit);
    expect(d.address).to.equal(getCreate2Address(CREATE2_DEPLOYER, DEPLOYMENT_SALT, keccak256(expectedInit)));
    expect(d.deployData).to.equal(DEPLOYMENT_SALT + expectedInit.slice(2));
    expect(forwarderDeployment(collector.toLowerCase())).to.deep.equal(d);
    expect(forwarderDeployment(Wallet.createRandom().address).address).to.not.equal(d.address);
  });

  it('forwarder runtime code hash has the collector written at every immutable reference, nothing else changed', () => {
    const collector = Wallet.createRandom().address;
    const refs = Object.values(DEPOSIT_FORWARDER_ARTIFACT.immutableReferences).flat();
    expect(refs.length).to.be.greaterThan(0);
    const code = Buffer.from(DEPOSIT_FORWARDER_ARTIFACT.runtimeBytecode.slice(2), 'hex');
    const word = Buffer.from(collector.slice(2).padStart(64, '0'), 'hex');
    for (const r of refs) {
      expect(code.subarray(r.start, r.start + r.length).equals(Buffer.alloc(32))).to.equal(true);
      word.copy(code, r.start);
    }
    expect(forwarderDeployment(collector).runtimeCodeHash).to.equal(keccak256(code));
  });

  it('refuses a zero, malformed, ICAP or wrongly checksummed collector', () => {
    const good = Wallet.createRandom().address;
    const wrongCase = good.slice(0, 2) + [...good.slice(2)].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join('');
    for (const bad of [`0x${'00'.repeat(20)}`, '0x1234', 'XE7338O073KYGTWWZN0F2WZ0R8PX5ZPPZS', wrongCase, `${good} `]) {
      expect(() => forwarderDeployment(bad), bad).to.throw(TypeError);
    }
  });

  it('batch sweeper address = CREATE2 of its creation code, the same every time', () => {
    const d = batchSweeperDeployment();
    expect(d.address).to.equal(getCreate2Address(CREATE2_DEPLOYER, DEPLOYMENT_SALT, keccak256(BATCH_SWEEPER_ARTIFACT.bytecode)));
    expect(d.initCode).to.equal(BATCH_SWEEPER_ARTIFACT.bytecode);
    expect(d.runtimeCodeHash).to.equal(keccak256(BATCH_SWEEPER_ARTIFACT.runtimeBytecode));
    expect(batchSweeperDeployment()).to.deep.equal(d);
  });

  it('the forwarder has no entry point but sweep, COLLECTOR and receive', () => {
    const abi = DEPOSIT_FORWARDER_ARTIFACT.abi as AbiItem[];
    const entries = abi.filter((f) => f.type !== 'error').map((f) => `${f.type}:${f.name ?? ''}:${f.stateMutability}`).sort();
    expect(entries).to.deep.equal(['constructor::nonpayable', 'function:COLLECTOR:view', 'function:sweep:nonpayable', 'receive::payable']);
    expect(abi.some((f) => f.type === 'fallback')).to.equal(false);
  });

  it('the forwarder code has no SSTORE/TSTORE, DELEGATECALL, CALLCODE, CREATE/CREATE2 or SELFDESTRUCT', () => {
    const ops = new Set(opcodes(DEPOSIT_FORWARDER_ARTIFACT.runtimeBytecode));
    expect(ops.has(0xf1), 'CALL is there (the parse works)').to.equal(true);
    for (const [name, op] of Object.entries({ SSTORE: 0x55, TSTORE: 0x5d, DELEGATECALL: 0xf4, CALLCODE: 0xf2, CREATE: 0xf0, CREATE2: 0xf5, SELFDESTRUCT: 0xff })) {
      expect(ops.has(op), name).to.equal(false);
    }
  });

  it('the batch sweeper has sweep and two constants, and no storage or delegatecall either', () => {
    const fns = (BATCH_SWEEPER_ARTIFACT.abi as AbiItem[]).filter((f) => f.type === 'function').map((f) => f.name).sort();
    expect(fns).to.deep.equal(['MAX_REASON_BYTES', 'PER_CALL_GAS', 'sweep']);
    const ops = new Set(opcodes(BATCH_SWEEPER_ARTIFACT.runtimeBytecode));
    for (const op of [0x55, 0x5d, 0xf4, 0xf2, 0xf0, 0xf5, 0xff]) expect(ops.has(op), `0x${op.toString(16)}`).to.equal(false);
  });
});
