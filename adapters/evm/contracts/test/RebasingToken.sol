// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.28;

/**
 * TEST ONLY. A rebasing token whose balances grow 1% of the initial amount per block:
 * balanceOf = shares * index / 1e18 with index = 1e18 + 1e16 * (blocks since deployment). So the
 * balance a sweep sends is the one at its own block, not one read earlier. Transferring a whole
 * balance moves every share (no dust). Anyone may mint shares.
 */
contract RebasingToken {
    mapping(address => uint256) public sharesOf;
    uint256 public immutable startBlock;

    event Transfer(address indexed from, address indexed to, uint256 value);

    constructor() {
        startBlock = block.number;
    }

    function index() public view returns (uint256) {
        return 1e18 + 1e16 * (block.number - startBlock);
    }

    function balanceOf(address account) public view returns (uint256) {
        return (sharesOf[account] * index()) / 1e18;
    }

    function mintShares(address to, uint256 shares) external {
        sharesOf[to] += shares;
        emit Transfer(address(0), to, (shares * index()) / 1e18);
    }

    function transfer(address to, uint256 amount) external returns (bool) {
        uint256 shares = sharesOf[msg.sender];
        uint256 moving = amount == balanceOf(msg.sender) ? shares : (amount * 1e18) / index();
        require(moving <= shares, "Rebasing: balance");
        sharesOf[msg.sender] = shares - moving;
        sharesOf[to] += moving;
        emit Transfer(msg.sender, to, amount);
        return true;
    }
}
