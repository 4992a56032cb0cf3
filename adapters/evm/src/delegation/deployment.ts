/**
 * Deterministic deployment of DepositForwarder and BatchSweeper through the Arachnid
 * deterministic-deployment proxy (CREATE2): the same init code gives the same address on every
 * chain that has the proxy, so a deposit address's delegate is known before anything is sent.
 */
import { AbiCoder, concat, dataSlice, getAddress, getBytes, hexlify, keccak256 } from 'ethers';
import { checkedAddress } from './hex';
import { BATCH_SWEEPER_ARTIFACT, DEPOSIT_FORWARDER_ARTIFACT, type ContractArtifact } from './artifacts';

/**
 * Arachnid's deterministic deployment proxy (github.com/Arachnid/deterministic-deployment-proxy):
 * a transaction to it with data = salt (32 bytes) || initCode deploys initCode with CREATE2 and
 * returns the address. Present on most EVM chains, and predeployed by anvil (1.7: eth_getCode
 * answers its code on a fresh node). EIP-55 spelling (…920cA78…: the often-quoted …920CA78… has
 * a wrong checksum and ethers refuses it).
 */
export const CREATE2_DEPLOYER = '0x4e59b44847b379578588920cA78FbF26c0B4956C';

/**
 * The CREATE2 salt of both contracts: 32 zero bytes. The address is fixed by the init code alone
 * (which holds the collector for a forwarder), so anyone deploying the same init code, first or
 * not, puts the same code at the same address: no salt needs to be secret or mined.
 */
export const DEPLOYMENT_SALT = `0x${'00'.repeat(32)}`;

/** How to deploy one contract through CREATE2_DEPLOYER, and what will be there. */
export interface Deployment {
  /** EIP-55 address the contract gets. */
  readonly address: string;
  /** Creation code || ABI-encoded constructor arguments. */
  readonly initCode: string;
  /** Calldata of a transaction to CREATE2_DEPLOYER: DEPLOYMENT_SALT || initCode. */
  readonly deployData: string;
  /** keccak256 of the runtime code the address will hold (compare with keccak256(eth_getCode)). */
  readonly runtimeCodeHash: string;
}

/** CREATE2 address: keccak256(0xff || deployer || salt || keccak256(initCode))[12:]. */
function create2Address(initCode: string): string {
  return getAddress(dataSlice(keccak256(concat(['0xff', CREATE2_DEPLOYER, DEPLOYMENT_SALT, keccak256(initCode)])), 12));
}

function deployment(initCode: string, runtimeCode: string): Deployment {
  return Object.freeze({
    address: create2Address(initCode),
    initCode,
    deployData: concat([DEPLOYMENT_SALT, initCode]),
    runtimeCodeHash: keccak256(runtimeCode),
  });
}

/** Runtime code with every immutable written in (each immutable is one 32-byte word). */
function runtimeWithImmutables(artifact: ContractArtifact, values: ReadonlyArray<string>): string {
  const code = getBytes(artifact.runtimeBytecode);
  const refs = Object.values(artifact.immutableReferences);
  if (refs.length !== values.length) throw new Error(`artifact has ${refs.length} immutables, ${values.length} given`);
  refs.forEach((places, i) => {
    const word = getBytes(values[i]!);
    for (const { start, length } of places) {
      if (length !== 32 || word.length !== 32) throw new Error('immutable references are expected to be 32-byte words');
      code.set(word, start);
    }
  });
  return hexlify(code);
}

/**
 * The forwarder whose COLLECTOR is `collector` (any address but zero; EIP-55 or all-lower/upper
 * hex). Init code = creation code || abi.encode(collector), salt DEPLOYMENT_SALT; each collector
 * has its own forwarder address.
 */
export function forwarderDeployment(collector: string): Deployment {
  const checked = checkedAddress('forwarderDeployment: collector', collector);
  if (BigInt(checked) === 0n) throw new TypeError('forwarderDeployment: the collector must not be the zero address');
  const encoded = AbiCoder.defaultAbiCoder().encode(['address'], [checked]);
  const initCode = concat([DEPOSIT_FORWARDER_ARTIFACT.bytecode, encoded]);
  return deployment(initCode, runtimeWithImmutables(DEPOSIT_FORWARDER_ARTIFACT, [encoded]));
}

/** The one BatchSweeper (no constructor arguments): the same address on every chain. */
export function batchSweeperDeployment(): Deployment {
  return deployment(BATCH_SWEEPER_ARTIFACT.bytecode, BATCH_SWEEPER_ARTIFACT.runtimeBytecode);
}
