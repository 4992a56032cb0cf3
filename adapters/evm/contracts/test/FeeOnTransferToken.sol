// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.28;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/**
 * TEST ONLY. Burns 1% of every transfer from the sender on top of what the recipient gets: a
 * transfer of `amount` debits the sender `amount` and credits the recipient `amount - amount/100`.
 * Anyone may mint.
 */
contract FeeOnTransferToken is ERC20 {
    constructor() ERC20("Fee on transfer", "FOT") {}

    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }

    function _transfer(address from, address to, uint256 amount) internal override {
        uint256 fee = amount / 100;
        super._transfer(from, to, amount - fee);
        if (fee != 0) _burn(from, fee);
    }
}
